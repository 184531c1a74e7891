//! The byte-aligned header search: among the encodings of the same code
//! lengths (how runs split into repeat codes 16/17/18, which code-length
//! code, HCLEN), the fewest bits that end on a byte boundary. Two exact
//! searches alternate from the greedy encoding: a DP over run splits ×
//! bits mod 8 for a fixed code-length code ([`Dp`]), and a search over
//! complete code-length codes × HCLEN for fixed runs ([`aligned_tree`]).
//! Not proven optimal overall; it writes no bits (the parent emits them).

use super::*;
use crate::constants::{NUM_DIST, NUM_LITLEN};

pub(super) const INF: u32 = u32::MAX;

#[cfg(test)]
#[path = "dp_reference.rs"]
mod dp_reference;

/// Positions one position's pushed items reach, from its own: a pushed
/// run is at most 10 lengths, and `run & 15` indexes a window of 16
/// positions without a bounds check.
const WINDOW: usize = 16;

/// A state's key: its cost (fewest bits) above [`KEY_SHIFT`] bits that say
/// how the best path got there (the last item's start, the residue before
/// it, and the literal length or which repeat code). Keys order paths as
/// a push in order of position, residue and item meets them, so the
/// smallest key is the best path a strict "cheaper replaces" keeps, and
/// relaxing a state is a `min`: no branch and no comparison for a fuzzer
/// build to trace.
const KEY_SHIFT: u32 = 16;

/// The cost of a state no path reaches: adding the bits of every item of
/// a header stays below 2^48, so it neither wraps nor comes under it.
const UNREACHED: u64 = 1 << 40;

/// The key of the path that ends with the item starting at `i` in residue
/// `r`, with `x` (the literal length, 0 for code 16, 1 for code 17 or 18)
/// and no cost yet.
fn how(i: usize, r: usize, x: u8) -> u64 {
    (i as u64) << 7 | (r as u64) << 4 | u64::from(x)
}

/// The smaller of two keys. Keys are below 2^63, so the sign of their
/// difference picks it: no comparison for a fuzzer build to trace in the
/// search's innermost loop (a `min` compiles to one there).
fn smaller(a: u64, b: u64) -> u64 {
    let d = a.wrapping_sub(b);
    b.wrapping_add(d & ((d as i64 >> 63) as u64))
}

/// For one code-length code: the fewest body bits (the run-length coded
/// lengths, without BFINAL..the code-length code) in each residue mod 8, and
/// how to get there. Segments are `[0, hlit)` and `[hlit, len)`: no item
/// crosses `hlit`, and a repeat (16) never starts a segment.
pub(super) struct Dp {
    /// `keys[i][r]`: fewest bits coding `seq[..i]` with bits ≡ r (mod 8),
    /// and the last item on that path ([`KEY_SHIFT`]).
    keys: Vec<[u64; 8]>,
    n: usize,
}

impl Dp {
    pub(super) fn run(seq: &[u8], hlit: usize, cl: &[u8; NUM_CODE_LEN_SYMBOLS]) -> Dp {
        let n = seq.len();
        let (same, prev_run) = runs(seq, hlit);
        let mut keys = Dp::states(n);
        // Items of code 18 (11 to 138 zeros) all cost the same from a
        // position, so the states they reach are pulled, not pushed: at
        // position j, the smallest key of a state i in residue r whose
        // zeros reach j, with 11 <= j - i <= 138, is the front of window r.
        // It starts before every pushed item that ends at j (runs up to
        // 10), so a push in order would have met it first.
        let b18 = if cl[18] != 0 {
            u64::from(cl[18]) + u64::from(extra_bits(18))
        } else {
            0
        };
        let mut windows = [const { Window::new() }; 8];
        let mut items: Vec<(u64, u8, u8)> = Vec::with_capacity(1 + 4 + 8);
        for j in 0..n {
            if b18 != 0 {
                Dp::pull_zero_runs(&mut windows, &same, seq, j, b18, &mut keys);
            }
            Dp::items_at(seq, j, &same, &prev_run, cl, &mut items);
            Dp::push(j, &items, &mut keys);
        }
        if b18 != 0 {
            Dp::pull_zero_runs(&mut windows, &same, seq, n, b18, &mut keys);
        }
        keys.truncate(n + 1);
        Dp { keys, n }
    }

    /// Every state unreached, padded by a window past the last one (see
    /// [`WINDOW`]), but position 0 in residue 0.
    fn states(n: usize) -> Vec<[u64; 8]> {
        assert!(n <= NUM_LITLEN + NUM_DIST, "{n} lengths");
        let mut keys = vec![[UNREACHED << KEY_SHIFT; 8]; n + 1 + WINDOW];
        keys[0][0] = 0;
        keys
    }

    /// The items but code 18 that can start at `i`: their bits (above
    /// [`KEY_SHIFT`], with their `x` of [`how`]), bits mod 8 and runs. They
    /// do not depend on the residue, so they are listed once per position,
    /// not once per residue.
    fn items_at(
        seq: &[u8],
        i: usize,
        same: &[usize],
        prev_run: &[usize],
        cl: &[u8; NUM_CODE_LEN_SYMBOLS],
        items: &mut Vec<(u64, u8, u8)>,
    ) {
        items.clear();
        let v = seq[i];
        let bits = cl[v as usize];
        if bits != 0 {
            items.push((u64::from(bits) << KEY_SHIFT | u64::from(v), bits % 8, 1));
        }
        // Repeat codes: (symbol, its x, shortest run, longest run here).
        let zeros = if v == 0 { same[i] } else { 0 };
        for (symbol, x, max) in [(16u8, 0, prev_run[i].min(6)), (17, 1, zeros.min(10))] {
            if cl[symbol as usize] == 0 {
                continue;
            }
            let bits = cl[symbol as usize] + extra_bits(symbol as usize) as u8;
            for run in 3..max + 1 {
                items.push((u64::from(bits) << KEY_SHIFT | x, bits % 8, run as u8));
            }
        }
    }

    /// Relaxes the states `items` reach from position `i`'s.
    fn push(i: usize, items: &[(u64, u8, u8)], keys: &mut [[u64; 8]]) {
        // The positions from `i` on, as a window an item's run indexes
        // with no bounds check.
        let kw: &mut [[u64; 8]; WINDOW] = (&mut keys[i..i + WINDOW]).try_into().expect("padded");
        let from: [u64; 8] =
            std::array::from_fn(|r| (kw[0][r] >> KEY_SHIFT << KEY_SHIFT) + how(i, r, 0));
        for &(add, bits, run) in items {
            let to = &mut kw[(run & 15) as usize];
            for (r, &f) in from.iter().enumerate() {
                let k = (r + bits as usize) % 8;
                // Keys stay far below 2^64: no overflow check to trace.
                to[k] = smaller(to[k], f.wrapping_add(add));
            }
        }
    }

    /// Settles position `j`'s states with the code-18 items (`b18` bits
    /// each) that end there: the window of each residue first takes
    /// position j - 11 and drops the positions that no longer reach j.
    fn pull_zero_runs(
        windows: &mut [Window; 8],
        same: &[usize],
        seq: &[u8],
        j: usize,
        b18: u64,
        keys: &mut [[u64; 8]],
    ) {
        if let Some(i) = j.checked_sub(11).filter(|&i| seq[i] == 0 && same[i] >= 11) {
            for (r, w) in windows.iter_mut().enumerate() {
                let cost = keys[i][r] >> KEY_SHIFT;
                if cost < UNREACHED {
                    w.push(i as u16, cost << KEY_SHIFT | how(i, r, 1));
                }
            }
        }
        let to = &mut keys[j];
        for (r, w) in windows.iter_mut().enumerate() {
            if let Some(key) = w.front(|i| i + 138 >= j && i + same[i] >= j) {
                let k = (r + b18 as usize) % 8;
                to[k] = smaller(to[k], key + (b18 << KEY_SHIFT));
            }
        }
    }

    /// Fewest body bits ending in residue `r`, if reachable.
    pub(super) fn best(&self, r: usize) -> Option<u32> {
        let c = self.keys[self.n][r] >> KEY_SHIFT;
        (c < UNREACHED).then_some(c as u32)
    }

    /// The last item of the best path into position `j` in residue `r`
    /// (reached) and the residue before it, from its key.
    fn back(&self, j: usize, r: usize) -> (ClItem, usize) {
        let key = self.keys[j][r];
        let (i, r, x) = (key >> 7 & 511, key >> 4 & 7, (key & 15) as u8);
        let run = j as u64 - i;
        let (symbol, extra) = match run {
            1 => (x, 0),
            11.. => (18, run - 11),
            _ => (16 + x, run - 3),
        };
        let extra = extra as u8;
        (ClItem { symbol, extra }, r as usize)
    }

    /// The items of the best path ending in residue `r` (reachable), last
    /// first, to `f`.
    fn walk_back(&self, mut r: usize, mut f: impl FnMut(ClItem)) {
        let mut i = self.n;
        while i > 0 {
            let (item, pr) = self.back(i, r);
            f(item);
            i -= item.run();
            r = pr;
        }
    }

    /// How often the best path ending in residue `r` (reachable) uses each
    /// code-length symbol: [`symbol_counts`] of [`Dp::items`], without them.
    pub(super) fn counts(&self, r: usize) -> [u64; NUM_CODE_LEN_SYMBOLS] {
        let mut used = [0u64; NUM_CODE_LEN_SYMBOLS];
        self.walk_back(r, |item| used[item.symbol as usize] += 1);
        used
    }

    /// The items of the best path ending in residue `r` (reachable).
    pub(super) fn items(&self, r: usize) -> Vec<ClItem> {
        let mut items = Vec::new();
        self.walk_back(r, |item| items.push(item));
        items.reverse();
        items
    }
}

/// Runs within each segment (`[0, hlit)` and `[hlit, len)`): equal
/// lengths from i on, and lengths equal to seq[i - 1] from i on (0 at a
/// segment start). (Arrays of the longest sequence, as in `aligned_code`.)
fn runs(seq: &[u8], hlit: usize) -> (Vec<usize>, Vec<usize>) {
    let n = seq.len();
    let mut same = vec![0usize; n + 1];
    let mut prev_run = vec![0usize; n + 1];
    for i in (0..n).rev() {
        let seg_end = if i < hlit { hlit } else { n };
        same[i] = if i + 1 < seg_end && seq[i + 1] == seq[i] {
            same[i + 1] + 1
        } else {
            1
        };
        prev_run[i] = if i == 0 || i == hlit {
            0
        } else if seq[i] == seq[i - 1] {
            same[i]
        } else {
            0
        };
    }
    (same, prev_run)
}

/// A sliding-window minimum: positions and their keys in increasing
/// position, keys rising from the front (a later position with a larger
/// key is never the minimum while both are in). At most 128 positions are
/// in a window (11 to 138 before j), so a ring of 256 indexed by a byte
/// never overflows.
struct Window {
    ring: [(u16, u64); 256],
    head: u8,
    tail: u8,
}

impl Window {
    const fn new() -> Window {
        Window {
            ring: [(0, 0); 256],
            head: 0,
            tail: 0,
        }
    }

    /// Adds position `i` (after every position in) with `key`.
    fn push(&mut self, i: u16, key: u64) {
        while self.tail != self.head && self.ring[self.tail.wrapping_sub(1) as usize].1 > key {
            self.tail = self.tail.wrapping_sub(1);
        }
        self.ring[self.tail as usize] = (i, key);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Drops front positions for which `live` is false, then gives the
    /// front's key: the smallest. Positions not live are older than every
    /// live one.
    fn front(&mut self, live: impl Fn(usize) -> bool) -> Option<u64> {
        while self.head != self.tail {
            let (i, key) = self.ring[self.head as usize];
            if live(i as usize) {
                return Some(key);
            }
            self.head = self.head.wrapping_add(1);
        }
        None
    }
}

/// Rounds of alternating between the two searches below.
pub(super) const ROUNDS: usize = 4;

/// Kraft sum of a complete code-length code in units of 2^-7.
pub(super) const CL_KRAFT: usize = 1 << MAX_CODE_LEN_CODE_LEN;

/// How far from its Huffman length [`aligned_tree`] moves a used symbol.
pub(super) const TREE_WINDOW: u8 = 1;

/// For fixed `items`: the complete code-length code (lengths ≤ 7, every
/// symbol `items` uses coded) and HCLEN that make the header shortest among
/// those a whole number of bytes long, if any.
///
/// A DP over the used symbols × Kraft sum so far × body bits mod 8, each
/// used symbol within [`TREE_WINDOW`] of its Huffman length. Unused symbols
/// cost nothing but can fill the rest of the Kraft sum: a remainder of `f`
/// units of 2^-7 needs `popcount(f)` of them among the first HCLEN entries.
/// Searched under `bound` as [`aligned_code`] is (`usize::MAX`: none).
pub(super) fn aligned_tree(items: &[ClItem], bound: usize) -> Option<Encoding> {
    let (hclen, cl_lengths) = aligned_code(&symbol_counts(items), bound)?;
    Some(Encoding {
        hclen,
        cl_lengths,
        items: items.to_vec(),
    })
}

/// How many times `items` use each code-length symbol.
pub(super) fn symbol_counts(items: &[ClItem]) -> [u64; NUM_CODE_LEN_SYMBOLS] {
    let mut used = [0u64; NUM_CODE_LEN_SYMBOLS];
    for it in items {
        used[it.symbol as usize] += 1;
    }
    used
}

/// [`aligned_tree`]'s search, which depends only on how often each symbol
/// is used: HCLEN and the code-length code. With a `bound` (header bits),
/// states that cannot end below it are skipped: every header below the
/// bound is found as the full search finds it, and the answer may differ
/// only when the best is not below the bound.
pub(super) fn aligned_code(
    used: &[u64; NUM_CODE_LEN_SYMBOLS],
    bound: usize,
) -> Option<(usize, [u8; NUM_CODE_LEN_SYMBOLS])> {
    let extra: usize = (16..NUM_CODE_LEN_SYMBOLS)
        .map(|s| used[s] as usize * extra_bits(s) as usize)
        .sum();
    let huffman = limited_code_lengths(used, MAX_CODE_LEN_CODE_LEN);
    // Used symbols in CODE_LEN_ORDER, with their order positions. Fixed
    // arrays here, not vectors: the search runs a few times a table, and
    // an allocation costs more than these loops under AddressSanitizer.
    let mut order = [(0usize, 0usize); NUM_CODE_LEN_SYMBOLS];
    let mut m = 0;
    for (p, &s) in CODE_LEN_ORDER.iter().enumerate() {
        if used[s] > 0 {
            order[m] = (p, s);
            m += 1;
        }
    }
    let syms = &order[..m];
    let last_pos = syms.last()?.0;
    const W: usize = CL_KRAFT + 1;
    // Costs after the first j used symbols; choice row j: the length given
    // to used symbol j - 1 on the best path into each state.
    let window = |s: usize| {
        let h = huffman[s];
        let lo = h.saturating_sub(TREE_WINDOW).max(1);
        (lo, (h + TREE_WINDOW).min(MAX_CODE_LEN_CODE_LEN))
    };
    // Kraft sums a path can hold before used symbol j: at most the sum of
    // the longest codes before it, and at most what leaves room for the
    // shortest codes of the symbols from j on (the rest are dead states,
    // skipping them changes no path that completes).
    let mut reach = [0usize; NUM_CODE_LEN_SYMBOLS + 1];
    let mut need = [0usize; NUM_CODE_LEN_SYMBOLS + 1];
    for (j, &(_, s)) in syms.iter().enumerate() {
        reach[j + 1] = reach[j] + (CL_KRAFT >> window(s).0);
    }
    // Fewest bits the symbols from j on can add (each at its shortest), and
    // the fewest bits outside the body (the smallest HCLEN).
    let mut fewest = [0usize; NUM_CODE_LEN_SYMBOLS + 1];
    for (j, &(_, s)) in syms.iter().enumerate().rev() {
        need[j] = need[j + 1] + (CL_KRAFT >> window(s).1);
        fewest[j] = fewest[j + 1] + used[s] as usize * window(s).0 as usize;
    }
    let outside = 17 + 3 * (last_pos + 1).max(4) + extra;
    // Headers found are whole bytes: one below the bound is at most the
    // last multiple of 8 under it, so states that cannot end at or under
    // that are pruned as well (`below` is one past it).
    let below = bound.checked_sub(1)? / 8 * 8 + 1;
    // rows[j * W + kraft][r]: the key of each state after the first j used
    // symbols, its cost above 8 bits that hold the Kraft sum it came from
    // (its smallest key is the first best a strict "cheaper replaces" in
    // order of Kraft sum keeps, and the length given to symbol j - 1 is
    // the Kraft share between them). INF: unreached. One allocation, so
    // relaxing a state is a `min`, with no branch for a fuzzer to trace.
    let mut rows = vec![[INF; 8]; (syms.len() + 1) * W];
    rows[0][0] = 0;
    let mut from_min = [INF; CL_KRAFT + 1];
    from_min[0] = 0;
    for (j, &(_, s)) in syms.iter().enumerate() {
        let n = used[s] as u32;
        let (lo, hi) = window(s);
        let (done, next) = rows.split_at_mut((j + 1) * W);
        let (from, to) = (&done[j * W..], &mut next[..W]);
        let live = reach[j].min(CL_KRAFT.saturating_sub(need[j]));
        // A state costing `cap` or more cannot end below the bound (INF
        // states are at or above it too).
        let cap = below.saturating_sub(outside + fewest[j]).min(INF as usize) as u64;
        // For one target state and Kraft sum `kraft`, the length and the
        // residue it came from are fixed (each length adds its own Kraft
        // share), so visiting lengths before residues finds the same first
        // best as residues before lengths.
        // Exclusive ranges here and in `Dp::run`: an inclusive one tests a
        // flag each step, one more comparison for a fuzzer to trace.
        for kraft in 0..live + 1 {
            // Most Kraft sums hold no state below the cap (five in six on
            // trained tables): one comparison skips them.
            if u64::from(from_min[kraft] >> 8) >= cap {
                continue;
            }
            // States at or above the cap are as good as unreachable; the
            // rest come from this Kraft sum. (cost - cap wraps, setting the
            // top bit, exactly when the cost is under the cap.)
            let at = from[kraft];
            let row: [u32; 8] = std::array::from_fn(|k| {
                let c = at[k];
                let under = (u64::from(c >> 8).wrapping_sub(cap) >> 63) as u32;
                (c >> 8 << 8 | kraft as u32) | under.wrapping_sub(1)
            });
            for len in lo..hi + 1 {
                let nk = kraft + (CL_KRAFT >> len);
                if nk > CL_KRAFT {
                    continue;
                }
                let add = n * len as u32;
                let shift = add as usize % 8;
                let dst = &mut to[nk];
                for k in 0..8 {
                    // Residue k is reached from residue k - add (mod 8);
                    // an unreachable one stays at INF.
                    let c = row[(k + 8 - shift) % 8].saturating_add(add << 8);
                    dst[k] = dst[k].min(c);
                }
            }
        }
        for (m, row) in from_min.iter_mut().zip(to.iter()) {
            *m = row.iter().fold(INF, |a, &c| a.min(c));
        }
    }
    let fin = &rows[syms.len() * W..];
    // (total bits, hclen, Kraft sum of the used symbols, residue)
    let mut best: Option<(usize, usize, usize, usize)> = None;
    for hclen in (last_pos + 1).max(4)..NUM_CODE_LEN_SYMBOLS + 1 {
        let spare = CODE_LEN_ORDER[..hclen]
            .iter()
            .filter(|&&s| used[s] == 0)
            .count() as u32;
        let r = (8 - (17 + 3 * hclen + extra) % 8) % 8;
        for (kraft, at) in fin.iter().enumerate().skip(1) {
            let c = at[r];
            if c == INF || ((CL_KRAFT - kraft) as u32).count_ones() > spare {
                continue;
            }
            let total = 17 + 3 * hclen + extra + (c >> 8) as usize;
            if best.is_none_or(|b| total < b.0) {
                best = Some((total, hclen, kraft, r));
            }
        }
    }
    let (_, hclen, mut kraft, mut r) = best?;
    let mut cl_lengths = [0u8; NUM_CODE_LEN_SYMBOLS];
    // Unused symbols among the first HCLEN entries fill the Kraft sum.
    let mut fill = CL_KRAFT - kraft;
    for &s in CODE_LEN_ORDER[..hclen].iter().filter(|&&s| used[s] == 0) {
        if fill == 0 {
            break;
        }
        let unit: usize = 1 << fill.trailing_zeros();
        cl_lengths[s] = MAX_CODE_LEN_CODE_LEN - unit.trailing_zeros() as u8;
        fill -= unit;
    }
    debug_assert_eq!(fill, 0);
    for j in (1..=syms.len()).rev() {
        let s = syms[j - 1].1;
        let before = (rows[j * W + kraft][r] & 0xff) as usize;
        let len = MAX_CODE_LEN_CODE_LEN - (kraft - before).trailing_zeros() as u8;
        cl_lengths[s] = len;
        kraft = before;
        r = (r + 8 - (used[s] as usize * len as usize) % 8) % 8;
    }
    debug_assert_eq!((kraft, r), (0, 0));
    Some((hclen, cl_lengths))
}

/// The shortest byte-aligned encoding found, if any, by alternating two
/// exact searches: for a code-length code, the best run-length coding in
/// every residue mod 8 ([`Dp`], combined with every HCLEN allowed); for the
/// items of each such coding, the best aligned code-length code and HCLEN
/// ([`aligned_tree`]). Starts from the greedy coding; each round can only
/// shorten the best header, and stops when the code repeats.
pub(super) fn aligned(seq: &[u8], hlit: usize, start: &Encoding) -> Option<Encoding> {
    // Codings of different residues often use each symbol as often: search
    // each count vector once (its bound, then its aligned code, if needed).
    struct Searched {
        used: [u64; NUM_CODE_LEN_SYMBOLS],
        /// [`greedy_bits`] of the items: no code does better.
        floor: usize,
        /// [`aligned_code`]'s answer, once asked.
        code: Option<Option<(usize, [u8; NUM_CODE_LEN_SYMBOLS])>>,
    }
    let mut searched: Vec<Searched> = Vec::new();
    // The greedy coding with HCLEN raised until its bits end on a byte is
    // aligned: each entry adds 3 bits, and 3 is odd, so 0 to 7 more reach
    // every residue. It is among the codes the first search tries (its
    // code-length code is the Huffman code of its items), so that search
    // finds the same best under its bits + 1, and skips what cannot beat
    // them (the search without a bound was half of the time).
    let pad = (8 - start.bits() % 8) % 8 * 3 % 8;
    let first_bound = if start.hclen + pad <= NUM_CODE_LEN_SYMBOLS {
        start.bits() + 3 * pad + 1
    } else {
        usize::MAX
    };
    let mut best = aligned_tree(&start.items, first_bound);
    // `best`'s bits (usize::MAX: none yet), kept beside it: a header's bits
    // walk all its items.
    let mut best_bits = best.as_ref().map_or(usize::MAX, Encoding::bits);
    let mut tried: Vec<[u8; NUM_CODE_LEN_SYMBOLS]> = Vec::new();
    let mut cl = best.as_ref().map_or(start.cl_lengths, |e| e.cl_lengths);
    for _ in 0..ROUNDS {
        if tried.contains(&cl) {
            break;
        }
        tried.push(cl);
        debug_assert_eq!(kraft_sum(&cl), KRAFT_COMPLETE);
        let dp = Dp::run(seq, hlit, &cl);
        for hclen in min_hclen(&cl)..=NUM_CODE_LEN_SYMBOLS {
            let r = (8 - (17 + 3 * hclen) % 8) % 8;
            // The path's bits are known before its items are: build them
            // only for a header that wins.
            if let Some(body) = dp.best(r) {
                let bits = 17 + 3 * hclen + body as usize;
                if bits < best_bits {
                    let e = Encoding {
                        hclen,
                        cl_lengths: cl,
                        items: dp.items(r),
                    };
                    debug_assert_eq!(e.bits(), bits);
                    best = Some(e);
                    best_bits = bits;
                }
            }
        }
        for r in (0..8).filter(|&r| dp.best(r).is_some()) {
            // The items' symbol counts decide everything below; the items
            // are built only for a header that wins.
            let used = dp.counts(r);
            let k = match searched.iter().position(|e| e.used == used) {
                Some(k) => k,
                None => {
                    searched.push(Searched {
                        used,
                        floor: greedy_bits(&used),
                        code: None,
                    });
                    searched.len() - 1
                }
            };
            // No code-length code does better than the Huffman code of the
            // items with the smallest HCLEN, and a header that wins is whole
            // bytes, so at least the floor rounded up to a byte: skip items
            // that cannot win.
            if searched[k].floor.next_multiple_of(8) >= best_bits {
                continue;
            }
            // Searched under the best so far: a code found below it is the
            // one the full search finds, and one not below it never wins
            // later either (the best only shrinks).
            let code = *searched[k]
                .code
                .get_or_insert_with(|| aligned_code(&used, best_bits));
            if let Some((hclen, cl_lengths)) = code {
                let bits = 17 + 3 * hclen + body_bits_of(&cl_lengths, &used);
                if bits < best_bits {
                    let e = Encoding {
                        hclen,
                        cl_lengths,
                        items: dp.items(r),
                    };
                    debug_assert_eq!(e.bits(), bits);
                    best = Some(e);
                    best_bits = bits;
                }
            }
        }
        match &best {
            Some(b) => cl = b.cl_lengths,
            None => break,
        }
    }
    best
}
