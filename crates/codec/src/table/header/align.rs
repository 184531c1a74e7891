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

/// States one position's items reach, from its own: a run is at most 138
/// lengths and kept in a byte, so `run * 8 + residue` indexes a window of
/// 256 positions × 8 residues without a bounds check (each one a
/// comparison a fuzzer build traces, in the search's innermost loop).
const WINDOW: usize = 256 * 8;

/// For one code-length code: the fewest body bits (the run-length coded
/// lengths, without BFINAL..the code-length code) in each residue mod 8, and
/// how to get there. Segments are `[0, hlit)` and `[hlit, len)`: no item
/// crosses `hlit`, and a repeat (16) never starts a segment.
pub(super) struct Dp {
    /// `cost[i * 8 + r]`: fewest bits coding `seq[..i]` with bits ≡ r (mod 8).
    cost: Vec<u32>,
    /// The last item on that best path and the residue before it.
    back: Vec<(ClItem, u8)>,
    n: usize,
}

impl Dp {
    pub(super) fn run(seq: &[u8], hlit: usize, cl: &[u8; NUM_CODE_LEN_SYMBOLS]) -> Dp {
        let n = seq.len();
        // Runs within the segment: equal lengths from i on, and lengths equal
        // to seq[i - 1] from i on (0 at a segment start).
        // (Arrays of the longest sequence, as in `aligned_code`.)
        assert!(n <= NUM_LITLEN + NUM_DIST, "{n} lengths");
        let mut same = [0usize; NUM_LITLEN + NUM_DIST + 1];
        let mut prev_run = [0usize; NUM_LITLEN + NUM_DIST + 1];
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
        // Padded by a window past the last state (see [`WINDOW`]).
        let states = (n + 1) * 8;
        let mut cost = vec![INF; states + WINDOW];
        let mut back = vec![
            (
                ClItem {
                    symbol: 0,
                    extra: 0
                },
                0u8
            );
            states + WINDOW
        ];
        cost[0] = 0;
        // The items that can start at `i`, with their bits and runs: they
        // do not depend on the residue, so they are listed once per
        // position, not once per residue.
        let mut items: Vec<(ClItem, u32, u8)> = Vec::with_capacity(1 + 4 + 8 + 128);
        for i in 0..n {
            items.clear();
            let v = seq[i];
            if cl[v as usize] != 0 {
                let item = ClItem {
                    symbol: v,
                    extra: 0,
                };
                items.push((item, u32::from(cl[v as usize]), 1));
            }
            // Repeat codes: (symbol, shortest run, longest run here).
            let zeros = if v == 0 { same[i] } else { 0 };
            for (symbol, min, max) in [
                (16u8, 3, prev_run[i].min(6)),
                (17, 3, zeros.min(10)),
                (18, 11, zeros.min(138)),
            ] {
                if cl[symbol as usize] == 0 {
                    continue;
                }
                let bits = u32::from(cl[symbol as usize]) + extra_bits(symbol as usize);
                for run in min..max + 1 {
                    let extra = (run - min) as u8;
                    items.push((ClItem { symbol, extra }, bits, run as u8));
                }
            }
            // The states from `i` on, as a window an item's run (a byte)
            // and residue index with no bounds check.
            let cw: &mut [u32; WINDOW] = (&mut cost[i * 8..i * 8 + WINDOW])
                .try_into()
                .expect("padded");
            let bw: &mut [(ClItem, u8); WINDOW] = (&mut back[i * 8..i * 8 + WINDOW])
                .try_into()
                .expect("padded");
            for r in 0..8 {
                let c = cw[r];
                if c == INF {
                    continue;
                }
                for &(item, bits, run) in &items {
                    let k = run as usize * 8 + (r + bits as usize) % 8;
                    if c + bits < cw[k] {
                        cw[k] = c + bits;
                        bw[k] = (item, r as u8);
                    }
                }
            }
        }
        cost.truncate(states);
        back.truncate(states);
        Dp { cost, back, n }
    }

    /// Fewest body bits ending in residue `r`, if reachable.
    pub(super) fn best(&self, r: usize) -> Option<u32> {
        let c = self.cost[self.n * 8 + r];
        (c != INF).then_some(c)
    }

    /// The items of the best path ending in residue `r` (reachable), last
    /// first, to `f`.
    fn walk_back(&self, mut r: usize, mut f: impl FnMut(ClItem)) {
        let mut i = self.n;
        while i > 0 {
            let (item, pr) = self.back[i * 8 + r];
            f(item);
            i -= item.run();
            r = pr as usize;
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
    const W: usize = (CL_KRAFT + 1) * 8;
    let idx = |kraft: usize, r: usize| kraft * 8 + r;
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
    // Only two rows of costs are live: `from` (after j symbols) and `to`,
    // with the cheapest of each Kraft sum's 8 residues beside `from`.
    let mut from = [INF; W];
    let mut to = [INF; W];
    let mut from_min = [INF; CL_KRAFT + 1];
    // choice[j * W..][state] (zeroed in one allocation).
    let mut choice = vec![0u8; (syms.len() + 1) * W];
    from[idx(0, 0)] = 0;
    from_min[0] = 0;
    for (j, &(_, s)) in syms.iter().enumerate() {
        let n = used[s] as u32;
        let (lo, hi) = window(s);
        to.fill(INF);
        let ch = &mut choice[(j + 1) * W..(j + 2) * W];
        let live = reach[j].min(CL_KRAFT.saturating_sub(need[j]));
        // A state costing `cap` or more cannot end below the bound (INF
        // states are at or above it too).
        let cap = bound.saturating_sub(outside + fewest[j]).min(INF as usize) as u32;
        // For one target state and Kraft sum `kraft`, the length and the
        // residue it came from are fixed (each length adds its own Kraft
        // share), so visiting lengths before residues finds the same first
        // best as residues before lengths.
        // Exclusive ranges here and in `Dp::run`: an inclusive one tests a
        // flag each step, one more comparison for a fuzzer to trace.
        for kraft in 0..live + 1 {
            // Most Kraft sums hold no state below the cap (five in six on
            // trained tables): one comparison skips them.
            if from_min[kraft] >= cap {
                continue;
            }
            // States at or above the cap are as good as unreachable.
            let row: [u32; 8] = std::array::from_fn(|k| {
                let c = from[idx(kraft, k)];
                if c < cap {
                    c
                } else {
                    INF
                }
            });
            for len in lo..hi + 1 {
                let nk = kraft + (CL_KRAFT >> len);
                if nk > CL_KRAFT {
                    continue;
                }
                let add = n * len as u32;
                let shift = add as usize % 8;
                let at = idx(nk, 0)..idx(nk + 1, 0);
                let (dst, dch) = (&mut to[at.clone()], &mut ch[at]);
                for k in 0..8 {
                    // Residue k is reached from residue k - add (mod 8);
                    // an unreachable one stays at INF.
                    let c = row[(k + 8 - shift) % 8].saturating_add(add);
                    if c < dst[k] {
                        dst[k] = c;
                        dch[k] = len;
                    }
                }
            }
        }
        std::mem::swap(&mut from, &mut to);
        for (m, row) in from_min.iter_mut().zip(from.chunks_exact(8)) {
            *m = row.iter().fold(INF, |a, &c| a.min(c));
        }
    }
    let fin = &from;
    // (total bits, hclen, Kraft sum of the used symbols, residue)
    let mut best: Option<(usize, usize, usize, usize)> = None;
    for hclen in (last_pos + 1).max(4)..NUM_CODE_LEN_SYMBOLS + 1 {
        let spare = CODE_LEN_ORDER[..hclen]
            .iter()
            .filter(|&&s| used[s] == 0)
            .count() as u32;
        let r = (8 - (17 + 3 * hclen + extra) % 8) % 8;
        for kraft in 1..CL_KRAFT + 1 {
            let c = fin[idx(kraft, r)];
            if c == INF || ((CL_KRAFT - kraft) as u32).count_ones() > spare {
                continue;
            }
            let total = 17 + 3 * hclen + extra + c as usize;
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
        let len = choice[j * W + idx(kraft, r)];
        cl_lengths[s] = len;
        kraft -= CL_KRAFT >> len;
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
            // items with the smallest HCLEN: skip items that cannot win.
            if searched[k].floor >= best_bits {
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
