//! Hash-chain match finding: the Fast (greedy) and Default (lazy) parses.
//!
//! Each hash of 3 bytes heads a chain of the earlier positions with that
//! hash, newest first (`head`, and `prev` for Default or `prev16` for
//! Fast, all holding links: positions + 1); a search walks a bounded number
//! of links and keeps the first longest match. Best does not use the chains
//! (see `bt.rs`), only the hash. Default's cheap rejects (see [`Probe`])
//! read the page from `win`, a copy indexed by link, so they need neither
//! a mask nor a bounds check; Fast's read it from `buf`.

use super::{
    hash3, MatchFinder, TokenSink, DEFAULT_CHAIN_DEPTH, DEFAULT_NICE, FAST_CHAIN_DEPTH, FAST_NICE,
    NIL, PAD, WIN_SPAN,
};
use crate::constants::{MAX_MATCH, MIN_MATCH, PAGE_SIZE};

/// A search in progress at `i`: its limits, its cheap reject and its best
/// match so far.
///
/// The cheap reject is one load: bytes a longer match must share with `i`.
/// Before any match, the first three (at offset 0, masked); after a match
/// of n bytes, the four ending at byte n, the one that would extend it. (A
/// candidate passing with different first bytes only costs a compare: its
/// common length is below n.)
struct Probe {
    i: usize,
    /// Longest match possible at `i`.
    max: usize,
    /// The length that ends the search.
    nice: usize,
    /// Where the cheap reject loads: this many bytes into the candidate
    /// (below `MAX_MATCH - MIN_MATCH`).
    off: usize,
    mask: u32,
    key: u32,
    /// (length, distance) of the first longest match so far.
    best: (usize, usize),
}

/// Chain depth and the length at which a match is good enough to stop looking.
struct Search {
    max_chain: usize,
    nice: usize,
}

/// [`Level::Fast`](super::Level::Fast)'s search.
const FAST: Search = Search {
    max_chain: FAST_CHAIN_DEPTH,
    nice: FAST_NICE,
};

/// [`Level::Default`](super::Level::Default)'s search.
const DEFAULT: Search = Search {
    max_chain: DEFAULT_CHAIN_DEPTH,
    nice: DEFAULT_NICE,
};

/// The chain entry of `link`. Only positions with 3 bytes in the page
/// (below `PAGE_SIZE - 2`) are in chains, so links are below `PAGE_SIZE`
/// and the mask changes none: it only spares the bounds check.
#[inline(always)]
fn chain_index(link: u16) -> usize {
    debug_assert!(
        (link as usize) < PAGE_SIZE - 1,
        "link {link} of no position"
    );
    link as usize & (PAGE_SIZE - 1)
}

impl MatchFinder {
    /// Adds position `i` (with hash `h`) to its chain: with `WIDE` (the
    /// Default parse, whose long walks take four links a step) in `prev`,
    /// with the three links after the next one; else (Fast) in `prev16`.
    #[inline]
    fn insert<const WIDE: bool>(&mut self, i: usize, h: usize) {
        let next = self.head[h];
        // `i < PAGE_SIZE`: the mask only spares the bounds check.
        let at = (i & (PAGE_SIZE - 1)) + 1;
        if WIDE {
            // The links after `next` are the low three of its own entry (0
            // for NIL).
            self.prev[at] = u64::from(next) | self.prev[chain_index(next)] << 16;
        } else {
            self.prev16[at] = next;
        }
        self.head[h] = (i + 1) as u16;
    }

    /// Adds positions `from..end` (each with 3 bytes in the page) to their
    /// chains, in order (none if `from >= end`).
    #[inline]
    fn insert_run<const WIDE: bool>(&mut self, from: usize, end: usize) {
        // (A no-op: tells the compiler positions are in the page, so their
        // chain entries need no mask.)
        let end = end.min(PAGE_SIZE);
        let mut k = from;
        // Four at a time, their bytes from one load.
        while k + 4 <= end {
            let v = self.load8(k);
            for s in 0..4 {
                self.insert::<WIDE>(k + s, hash3((v >> (8 * s)) as u32));
            }
            k += 4;
        }
        while k < end {
            self.insert::<WIDE>(k, self.hash(k));
            k += 1;
        }
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
    /// `i`'s hash before `i` is inserted), if longer than `beat` bytes
    /// (`beat` is 0 or below the search's nice length). Returns (length,
    /// distance) of the first longest match in the walk if it is longer than
    /// `beat`, else a length of at most `beat` (0 if `beat` is 0): no match.
    /// With `WIDE` the chains are read from `prev`, else from `prev16`.
    ///
    /// `beat` changes no answer above it: the walk visits the same links and
    /// the first longest match is the same, only shorter candidates are
    /// rejected sooner (by the cheap reject of a match of `beat` bytes).
    #[inline(always)]
    fn longest<const WIDE: bool>(
        &self,
        i: usize,
        mut link: u16,
        s: &Search,
        beat: usize,
    ) -> (usize, usize) {
        let max = (self.len - i).min(MAX_MATCH);
        if max < MIN_MATCH || beat >= max {
            return (0, 0);
        }
        let mut p = Probe {
            i,
            max,
            nice: s.nice.min(max),
            off: 0,
            mask: 0x00ff_ffff,
            key: self.load4(i) & 0x00ff_ffff,
            best: (0, 0),
        };
        if beat >= MIN_MATCH {
            // As if a match of `beat` bytes had been found.
            p.best = (beat, 0);
            p.off = beat - MIN_MATCH;
            p.mask = u32::MAX;
            p.key = self.load4(i + p.off);
        }
        if link == NIL {
            return p.best;
        }
        let mut left = s.max_chain;
        if !WIDE {
            loop {
                if self.try_candidate::<false>(link, &mut p) {
                    break;
                }
                link = self.prev16[chain_index(link)];
                left -= 1;
                if link == NIL || left == 0 {
                    break;
                }
            }
            return p.best;
        }
        // Four links per step, all loaded from the last one (the depth is a
        // multiple of four, so only the fourth can use up the count). The
        // four cheap rejects are tested together first: most groups have no
        // candidate left, and go by without a walk through them one by one.
        loop {
            let links = self.prev[chain_index(link)];
            let group = [
                link,
                links as u16,
                (links >> 16) as u16,
                (links >> 32) as u16,
            ];
            let next = (links >> 48) as u16;
            let w = self.reject_window(&p);
            if Self::passes(w, group[0], &p)
                | Self::passes(w, group[1], &p)
                | Self::passes(w, group[2], &p)
                | Self::passes(w, group[3], &p)
            {
                // Links after a NIL are NIL: the chain ended in the group.
                for l in group {
                    if l == NIL || self.try_candidate::<true>(l, &mut p) {
                        return p.best;
                    }
                }
            }
            left -= 4;
            if next == NIL || left == 0 {
                break;
            }
            link = next;
        }
        p.best
    }

    /// Fast's walk: [`MatchFinder::longest`] out of line (measured faster
    /// than inlined into the parse loop).
    #[inline(never)]
    fn longest_fast(&self, i: usize, link: u16) -> (usize, usize) {
        self.longest::<false>(i, link, &FAST, 0)
    }

    /// The part of `win` the cheap rejects of `p` load from: from `p.off`
    /// on, so the bytes of link `l` at that offset start at `l`. Its length
    /// covers any link and the 4 bytes loaded: indexing it by a link needs
    /// no check.
    #[inline(always)]
    fn reject_window(&self, p: &Probe) -> &[u8; WIN_SPAN] {
        self.win[p.off..p.off + WIN_SPAN]
            .try_into()
            .expect("WIN_SPAN bytes")
    }

    /// Whether the candidate at `link` passes `p`'s cheap reject, its bytes
    /// read from `w`, `p`'s [`MatchFinder::reject_window`]. (NIL may pass:
    /// [`MatchFinder::try_candidate`] is not called for it.)
    #[inline(always)]
    fn passes(w: &[u8; WIN_SPAN], link: u16, p: &Probe) -> bool {
        let at = usize::from(link);
        let bytes = u32::from_le_bytes(w[at..at + 4].try_into().expect("4 bytes"));
        bytes & p.mask == p.key
    }

    /// Tries the candidate at `link` (not NIL) for `p`; true once the match
    /// is nice. With `WIDE` (Default) the cheap reject loads from `win`
    /// ([`MatchFinder::passes`]), else (Fast) from `buf`, as before `win`:
    /// Fast's short walks would not pay for copying the page into `win`.
    #[inline(always)]
    fn try_candidate<const WIDE: bool>(&self, link: u16, p: &mut Probe) -> bool {
        let j = link as usize - 1;
        let pass = if WIDE {
            Self::passes(self.reject_window(p), link, p)
        } else {
            self.load4(j + p.off) & p.mask == p.key
        };
        if pass {
            let n = self.common_len(j, p.i, p.max);
            if n > p.best.0 {
                // n >= 3: the first three bytes matched.
                p.best = (n, p.i - j);
                if n >= p.nice {
                    return true;
                }
                p.off = n - MIN_MATCH;
                p.mask = u32::MAX;
                p.key = self.load4(p.i + p.off);
            }
        }
        false
    }

    /// Longest match at `i` if longer than `beat` (see
    /// [`MatchFinder::longest`]), inserting `i` into its chain.
    #[inline(always)]
    fn find_and_insert(&mut self, i: usize, s: &Search, beat: usize) -> (usize, usize) {
        if i + MIN_MATCH > self.len {
            return (0, 0);
        }
        let h = self.hash(i);
        let link = self.head[h];
        self.insert::<true>(i, h);
        self.longest::<true>(i, link, s, beat)
    }

    /// Fast level: greedy, each position's hash chain walked at most
    /// [`FAST_CHAIN_DEPTH`] deep (one loop, only the walk out of line: it is
    /// the trainer's hot path too).
    pub(super) fn parse_greedy<S: TokenSink>(&mut self, sink: &mut S) {
        let n = self.len;
        // Positions below `last` have the 3 bytes a match needs. (`min` is a
        // no-op that bounds `last` for the compiler: fewer bounds checks.)
        let last = (n.min(PAGE_SIZE) + 1).saturating_sub(MIN_MATCH);
        // Every position goes into its chain first, in one pass without
        // data-dependent branches. The walk at `i` starts at `prev16[i + 1]`
        // (the entry of link i + 1), which links only earlier positions,
        // newest first: the same chain inserting while parsing builds, so
        // the same tokens.
        self.insert_run::<false>(0, last);
        let mut i = 0;
        while i < last {
            let link = self.prev16[i + 1];
            // An empty chain (common) is a literal: no walk to set up.
            if link != NIL {
                let (len, distance) = self.longest_fast(i, link);
                if len >= MIN_MATCH {
                    sink.copy(len as u16, distance as u16);
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

    /// Default level: lazy, each position's hash chain walked at most
    /// [`DEFAULT_CHAIN_DEPTH`] deep; a match is deferred when the next
    /// position has a longer one.
    pub(super) fn parse_lazy<S: TokenSink>(&mut self, sink: &mut S) {
        let s = DEFAULT;
        let n = self.len;
        self.win[1..=n].copy_from_slice(&self.buf[..n]);
        self.win[n + 1..n + 1 + PAD].fill(0);
        // Positions below `last` have the 3 bytes a match needs.
        let last = (self.len + 1).saturating_sub(MIN_MATCH);
        let mut i = 0;
        let mut cur = self.find_and_insert(0, &s, 0);
        while i < self.len {
            if cur.0 < MIN_MATCH {
                sink.literal(self.buf[i]);
                i += 1;
                cur = self.find_and_insert(i, &s, 0);
                continue;
            }
            // Defer if the next position starts a longer match (only a
            // longer one matters: the search there rejects shorter ones).
            let next = if cur.0 < s.nice {
                self.find_and_insert(i + 1, &s, cur.0)
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
            self.insert_run::<true>(first, (i + cur.0).min(last));
            i += cur.0;
            cur = self.find_and_insert(i, &s, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::structured_page;
    use super::super::*;
    use proptest::prelude::*;

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

    /// The Default parse as its definition reads: every earlier position in
    /// the chains before a search, the 64 most recent earlier positions with
    /// the same hash tried, newest first, the first longest match kept, stop
    /// at 128 bytes; a match is taken unless the next position has a longer
    /// one (then a literal goes out and that match is the candidate).
    fn reference_default(page: &[u8]) -> Vec<Token> {
        let mut buf = page.to_vec();
        buf.extend_from_slice(&[0; 4]);
        let hash = |i: usize| hash3(u32::from_le_bytes(buf[i..i + 4].try_into().unwrap()));
        let n = page.len();
        let mut seen: Vec<Vec<usize>> = vec![Vec::new(); HASH_SIZE];
        let mut inserted = 0;
        let mut search = |i: usize| {
            if i + MIN_MATCH > n {
                return (0, 0);
            }
            while inserted < i {
                seen[hash(inserted)].push(inserted);
                inserted += 1;
            }
            let max = (n - i).min(MAX_MATCH);
            let mut best = (0, 0);
            for &j in seen[hash(i)].iter().rev().take(DEFAULT_CHAIN_DEPTH) {
                let m = (0..max).take_while(|&k| page[j + k] == page[i + k]).count();
                if m >= MIN_MATCH && m > best.0 {
                    best = (m, i - j);
                    if m >= DEFAULT_NICE.min(max) {
                        break;
                    }
                }
            }
            best
        };
        let mut toks = Vec::new();
        let mut i = 0;
        let mut cur = search(0);
        while i < n {
            if cur.0 >= MIN_MATCH {
                let next = if cur.0 < DEFAULT_NICE {
                    search(i + 1)
                } else {
                    (0, 0)
                };
                if next.0 <= cur.0 {
                    toks.push(Token::Match {
                        length: cur.0 as u16,
                        distance: cur.1 as u16,
                    });
                    i += cur.0;
                    cur = search(i);
                    continue;
                }
                toks.push(Token::Literal(page[i]));
                i += 1;
                cur = next;
                continue;
            }
            toks.push(Token::Literal(page[i]));
            i += 1;
            cur = search(i);
        }
        toks
    }

    /// The tokens of the Default parse of `page`.
    fn default_tokens(page: &[u8]) -> Vec<Token> {
        let mut toks = Vec::new();
        MatchFinder::new().parse(page, Level::Default, None, &mut toks);
        toks
    }

    #[test]
    #[cfg_attr(miri, ignore = "whole pages are too slow under Miri")]
    fn default_parse_equals_its_definition_on_runs() {
        let mut page = Vec::new();
        for period in [1usize, 2, 3, 7, 8, 40, 300] {
            let unit: Vec<u8> = (0..period).map(|k| (k * 37 % 251) as u8).collect();
            page.extend(unit.iter().cycle().take(period * 70 + 50));
            page.extend_from_slice(b"xyz");
        }
        page.truncate(PAGE_SIZE);
        assert_eq!(default_tokens(&page), reference_default(&page));
        let zeros = [0u8; PAGE_SIZE];
        assert_eq!(default_tokens(&zeros), reference_default(&zeros));
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
        fn default_parse_equals_its_definition_on_structured_pages(
            pieces in proptest::collection::vec((0u8..3, 1usize..20, 1usize..400, any::<u64>()), 1..40)
        ) {
            let page = structured_page(&pieces);
            prop_assert_eq!(default_tokens(&page), reference_default(&page));
        }

        #[test]
        #[cfg_attr(miri, ignore)]
        fn default_parse_equals_its_definition(
            page in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), 0u8..4, any::<u8>()], 0..4096)
        ) {
            prop_assert_eq!(default_tokens(&page), reference_default(&page));
        }

    }
}
