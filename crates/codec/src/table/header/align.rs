//! The byte-aligned header search: among the encodings of the same code
//! lengths (how runs split into repeat codes 16/17/18, which code-length
//! code, HCLEN), the fewest bits that end on a byte boundary. Two exact
//! searches alternate from the greedy encoding: a DP over run splits ×
//! bits mod 8 for a fixed code-length code ([`Dp`], in `dp.rs`), and a
//! search over complete code-length codes × HCLEN for fixed runs
//! ([`aligned_tree`]).
//! Not proven optimal overall; it writes no bits (the parent emits them).

use super::dp::Dp;
use super::*;

/// An unreached state of [`aligned_code`]'s DP.
pub(super) const INF: u32 = u32::MAX;

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

/// A lower bound on the header bits with items using each code-length
/// symbol `used[s]` times and any code-length code: their length-limited
/// Huffman code (optimal) and the HCLEN that just reaches the last symbol
/// they use.
pub(super) fn greedy_bits(used: &[u64; NUM_CODE_LEN_SYMBOLS]) -> usize {
    let body = match huffman_bits(used) {
        Some(bits) => bits,
        None => body_bits_of(&cl_tree_of(*used), used),
    };
    17 + 3 * used_hclen(used) + body
}

/// The extra bits of repeat codes used `used[s]` times: the same under
/// every code-length code.
fn extra_of(used: &[u64; NUM_CODE_LEN_SYMBOLS]) -> usize {
    (16..NUM_CODE_LEN_SYMBOLS)
        .map(|s| used[s] as usize * extra_bits(s) as usize)
        .sum()
}

/// The smallest HCLEN that sends a length for every symbol `used`.
fn used_hclen(used: &[u64; NUM_CODE_LEN_SYMBOLS]) -> usize {
    CODE_LEN_ORDER
        .iter()
        .rposition(|&s| used[s] > 0)
        .map_or(0, |p| p + 1)
        .max(4)
}

/// The body bits [`cl_tree_of`]'s code gives, without building it, when
/// an unlimited Huffman code of two or more symbols is no deeper than 7
/// bits: the length-limited optimum is then the unlimited one, whose bits
/// are the sum of the merged weights (two queues over the sorted counts).
/// The search asks this of every count vector its entropy does not rule
/// out, and package-merge is several times the work.
fn huffman_bits(used: &[u64; NUM_CODE_LEN_SYMBOLS]) -> Option<usize> {
    let mut leaves = [0u64; NUM_CODE_LEN_SYMBOLS];
    let mut n = 0;
    for &c in used {
        if c > 0 {
            // Insertion sort, ascending.
            let mut k = n;
            while k > 0 && leaves[k - 1] > c {
                leaves[k] = leaves[k - 1];
                k -= 1;
            }
            leaves[k] = c;
            n += 1;
        }
    }
    if n < 2 {
        return None;
    }
    // Merged nodes, (weight, height), made in order of weight.
    let mut nodes = [(0u64, 0u8); NUM_CODE_LEN_SYMBOLS];
    let (mut leaf, mut head, mut made) = (0, 0, 0);
    let mut bits = 0u64;
    for _ in 1..n {
        let mut take = || {
            if leaf < n && (head == made || leaves[leaf] <= nodes[head].0) {
                leaf += 1;
                (leaves[leaf - 1], 0)
            } else {
                head += 1;
                nodes[head - 1]
            }
        };
        let (a, b) = (take(), take());
        nodes[made] = (a.0 + b.0, a.1.max(b.1) + 1);
        made += 1;
        bits += a.0 + b.0;
    }
    (nodes[made - 1].1 <= MAX_CODE_LEN_CODE_LEN).then_some(bits as usize + extra_of(used))
}

/// A lower bound on [`greedy_bits`] that builds no code: the entropy of the
/// symbols used (no prefix code codes them in fewer bits, nor a length-
/// limited one), rounded down with room for rounding errors, plus the bits
/// every code-length code spends alike (the smallest HCLEN, extra bits).
pub(super) fn entropy_bits(used: &[u64; NUM_CODE_LEN_SYMBOLS]) -> usize {
    let n = used.iter().sum::<u64>() as f64;
    let mut bits = 0f64;
    for &c in used.iter().filter(|&&c| c > 0) {
        bits += c as f64 * (n / c as f64).log2();
    }
    17 + 3 * used_hclen(used) + extra_of(used) + (bits * (1.0 - 1e-9)) as usize
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
    let extra = extra_of(used);
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
    if syms.is_empty() {
        return None;
    }
    const W: usize = CL_KRAFT + 1;
    // A header has at most 316 items, so every cost fits the 24 bits a
    // key (below) gives it.
    debug_assert!(
        used.iter().sum::<u64>()
            <= (crate::constants::NUM_LITLEN + crate::constants::NUM_DIST) as u64
    );
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
    let outside = 17 + 3 * used_hclen(used) + extra;
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
    for hclen in used_hclen(used)..NUM_CODE_LEN_SYMBOLS + 1 {
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
        /// A fingerprint of `used`, compared first: comparing the arrays
        /// each time calls `memcmp`, which a fuzzer build intercepts.
        print: u64,
        used: [u64; NUM_CODE_LEN_SYMBOLS],
        /// [`greedy_bits`] of the items, once asked: no code does better.
        floor: Option<usize>,
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
    let start_bits = start.bits();
    let pad = (8 - start_bits % 8) % 8 * 3 % 8;
    let first_bound = if start.hclen + pad <= NUM_CODE_LEN_SYMBOLS {
        start_bits + 3 * pad + 1
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
            let print = used
                .iter()
                .fold(0u64, |h, &c| (h ^ c).wrapping_mul(0x0000_0100_0000_01b3));
            let k = match searched
                .iter()
                .position(|e| e.print == print && e.used == used)
            {
                Some(k) => k,
                None => {
                    searched.push(Searched {
                        print,
                        used,
                        floor: None,
                        code: None,
                    });
                    searched.len() - 1
                }
            };
            // No code-length code does better than the Huffman code of the
            // items with the smallest HCLEN, nor than their entropy, and a
            // header that wins is whole bytes: skip items whose bound,
            // rounded up to a byte, is not below the best. The entropy
            // first: it builds no code (the Huffman bound is at least it,
            // so it skips nothing the Huffman bound would not).
            let loses = |bound: usize| bound.next_multiple_of(8) >= best_bits;
            if loses(entropy_bits(&used))
                || loses(*searched[k].floor.get_or_insert_with(|| greedy_bits(&used)))
            {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_entropy_bound_is_never_above_the_huffman_one(
            used in prop::collection::vec(
                prop_oneof![Just(0u64), 1u64..5, 1u64..400],
                NUM_CODE_LEN_SYMBOLS,
            ),
        ) {
            let used: [u64; NUM_CODE_LEN_SYMBOLS] = used.try_into().expect("19");
            prop_assume!(used.iter().any(|&c| c > 0));
            let (low, floor) = (entropy_bits(&used), greedy_bits(&used));
            prop_assert!(low <= floor, "{low} > {floor} for {used:?}");
        }
    }

    proptest! {
        #[test]
        fn huffman_bits_are_the_bits_of_the_code_length_code_built(
            used in prop::collection::vec(
                prop_oneof![Just(0u64), 1u64..3, 1u64..400, 1u64..1u64 << 20],
                NUM_CODE_LEN_SYMBOLS,
            ),
        ) {
            let used: [u64; NUM_CODE_LEN_SYMBOLS] = used.try_into().expect("19");
            let built = body_bits_of(&cl_tree_of(used), &used);
            match huffman_bits(&used) {
                Some(bits) => prop_assert_eq!(bits, built, "{:?}", used),
                // Fewer than two symbols, or a code deeper than 7: the
                // bound then builds the code.
                None => prop_assert_eq!(greedy_bits(&used) - 17 - 3 * used_hclen(&used), built),
            }
        }
    }

    #[test]
    fn huffman_bits_fall_back_for_deep_codes() {
        // Counts doubling: a Huffman code 12 deep, so no answer here.
        let used: [u64; NUM_CODE_LEN_SYMBOLS] = std::array::from_fn(|s| 1 << s.min(12));
        assert_eq!(huffman_bits(&used), None);
        let mut two = [0u64; NUM_CODE_LEN_SYMBOLS];
        (two[3], two[17]) = (5, 9);
        assert_eq!(huffman_bits(&two), Some(5 + 9 + 9 * 3));
    }

    #[test]
    fn the_entropy_bound_meets_a_dyadic_code_within_a_bit() {
        // Symbols 0, 8 and 9 used 2, 1 and 1 times: lengths 1, 2 and 2 are
        // both the Huffman code and the entropy (4 bits).
        let mut used = [0u64; NUM_CODE_LEN_SYMBOLS];
        (used[0], used[8], used[9]) = (2, 1, 1);
        let (low, floor) = (entropy_bits(&used), greedy_bits(&used));
        assert!(low <= floor && floor - low <= 1, "{low} against {floor}");
    }
}
