//! Code lengths for a compressor that writes the table's header into every
//! stream (ISA-L at level 0 with custom tables): minimise body bits plus
//! header bits times the streams that carry it, not body bits alone.
//!
//! The body cost of lengths `l` is Σ weight·l (the smoothed counts of the
//! training pages, [`crate::smoothing`]); the header cost is the exact bit
//! count of the codec's greedy run-length coding of `l`
//! ([`greedy_header_bits`]: HCLEN, the code-length code, the coded lengths),
//! weighted by one header per training page. The search starts from the
//! length-limited optimum of the body alone (package-merge) and makes local
//! moves, each kept only if the sum falls:
//! - give a symbol its neighbour's length (extends a run the header codes
//!   with repeat code 16), or one more or one less, then restore a complete
//!   code by lengthening or shortening other symbols of the same alphabet,
//!   those whose body cost changes least;
//! - swap the lengths of two nearby symbols (the Kraft sum is unchanged).
//!
//! Every candidate keeps each symbol coded (1..=15 bits), both codes
//! complete and, when asked, QPL's and igzip's 56-bit budget
//! ([`BitBudget`]). The table's header is then written in its fewest-bits
//! form (`HeaderForm::Fewest`), never longer than the greedy one priced here.

use cannery_codec::constants::{MAX_CODE_LEN, NUM_DIST, NUM_LITLEN};
use cannery_codec::table::header::greedy_header_bits;
use cannery_codec::table::rules::BitBudget;
use cannery_codec::CodeLengths;
use serde::Serialize;

use crate::histogram::ParseModel;

/// True if the target's compressor writes the table's header into every
/// stream, so a table for it minimises header plus body bits: ISA-L (level
/// 0 with custom tables). QPL's and IAA's canned streams carry no header.
pub fn header_per_stream(model: ParseModel) -> bool {
    model == ParseModel::Isal
}

/// Passes over every symbol before the search gives up improving.
const MAX_PASSES: usize = 12;
/// How far apart two symbols whose lengths are swapped may be.
const SWAP_REACH: usize = 3;
/// Kraft sum of a complete code, in units of 2^-15.
const FULL: u64 = 1 << MAX_CODE_LEN;

/// What the search found: both parts of the objective, before and after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HeaderAware {
    /// Greedy header bits of the length-limited optimum it started from.
    pub start_header_bits: usize,
    /// Greedy header bits of the lengths it returns.
    pub header_bits: usize,
    /// Body bits of the start on the training symbols (weights / scale).
    pub start_body_bits: u64,
    /// Body bits of the result on the training symbols.
    pub body_bits: u64,
    /// Headers the objective counted (one per training page).
    pub streams: u64,
}

/// The objective: weighted body bits plus `header_weight` per header bit.
struct Objective<'a> {
    ll_w: &'a [u64; NUM_LITLEN],
    d_w: &'a [u64; NUM_DIST],
    header_weight: u64,
    budget: bool,
}

impl Objective<'_> {
    fn body(&self, l: &CodeLengths) -> u64 {
        let dot =
            |l: &[u8], w: &[u64]| -> u64 { l.iter().zip(w).map(|(&n, &w)| n as u64 * w).sum() };
        dot(&l.litlen, self.ll_w) + dot(&l.dist, self.d_w)
    }

    /// The cost, or `None` when `l` breaks a constraint.
    fn cost(&self, l: &CodeLengths) -> Option<u64> {
        if self.budget && !BitBudget::of(l).fits() {
            return None;
        }
        Some(self.body(l) + self.header_weight * greedy_header_bits(l) as u64)
    }
}

fn unit(len: u8) -> u64 {
    FULL >> len
}

fn kraft(l: &[u8]) -> u64 {
    l.iter().map(|&n| unit(n)).sum()
}

/// Makes the code `l` complete again by changing symbols other than
/// `fixed`: shortening (Kraft sum too small) the heaviest symbols of the
/// lengths needed, or lengthening (too large) the lightest. `false` when no
/// such symbols exist.
fn repair(l: &mut [u8], w: &[u64], fixed: usize) -> bool {
    let sum = kraft(l);
    if sum == FULL {
        return true;
    }
    let grow = sum < FULL;
    let mut need = sum.abs_diff(FULL);
    // Fill `need` one power of two at a time, the largest first; a power
    // no symbol provides is split into two of the next smaller one.
    let mut pending: Vec<u64> = Vec::new();
    while need > 0 {
        let top = 1u64 << (63 - need.leading_zeros());
        pending.push(top);
        need -= top;
    }
    let mut guard = 0;
    while let Some(amount) = pending.pop() {
        guard += 1;
        if guard > 4 * FULL as usize {
            return false;
        }
        // Shortening from c to c - 1 adds unit(c); lengthening from c to
        // c + 1 removes unit(c + 1).
        let pick = (0..l.len())
            .filter(|&s| s != fixed)
            .filter(|&s| {
                if grow {
                    l[s] > 1 && unit(l[s]) == amount
                } else {
                    l[s] < MAX_CODE_LEN && unit(l[s] + 1) == amount
                }
            })
            .max_by_key(|&s| if grow { w[s] } else { u64::MAX - w[s] });
        match pick {
            Some(s) if grow => l[s] -= 1,
            Some(s) => l[s] += 1,
            None if amount > 1 => {
                pending.push(amount / 2);
                pending.push(amount / 2);
            }
            None => return false,
        }
    }
    kraft(l) == FULL
}

/// Lengths minimising body + header for the weights, from `start` (a
/// complete code coding every symbol, lengths ≤ 15). `header_weight` is
/// the weight of one header bit: streams × the weights' scale.
pub fn refine(
    ll_w: &[u64; NUM_LITLEN],
    d_w: &[u64; NUM_DIST],
    start: &CodeLengths,
    header_weight: u64,
    budget: bool,
) -> CodeLengths {
    let obj = Objective {
        ll_w,
        d_w,
        header_weight,
        budget,
    };
    let mut best = *start;
    let Some(mut best_cost) = obj.cost(&best) else {
        return best;
    };
    for _ in 0..MAX_PASSES {
        let before = best_cost;
        for alphabet in 0..2 {
            let n = if alphabet == 0 { NUM_LITLEN } else { NUM_DIST };
            for i in 0..n {
                let l = lengths_of(&best, alphabet).to_vec();
                let mut values: Vec<u8> = Vec::with_capacity(4);
                if i > 0 {
                    values.push(l[i - 1]);
                }
                if i + 1 < n {
                    values.push(l[i + 1]);
                }
                values.push(l[i].saturating_sub(1));
                values.push(l[i] + 1);
                values.sort_unstable();
                values.dedup();
                for v in values {
                    if v == 0 || v > MAX_CODE_LEN || v == l[i] {
                        continue;
                    }
                    let mut c = best;
                    let w: &[u64] = if alphabet == 0 { &ll_w[..] } else { &d_w[..] };
                    let lens = lengths_of_mut(&mut c, alphabet);
                    lens[i] = v;
                    if repair(lens, w, i) {
                        keep_if_better(&obj, c, &mut best, &mut best_cost);
                    }
                }
                for j in i + 1..(i + 1 + SWAP_REACH).min(n) {
                    let mut c = best;
                    let lens = lengths_of_mut(&mut c, alphabet);
                    if lens[i] != lens[j] {
                        lens.swap(i, j);
                        keep_if_better(&obj, c, &mut best, &mut best_cost);
                    }
                }
            }
        }
        if best_cost == before {
            break;
        }
    }
    best
}

fn lengths_of(c: &CodeLengths, alphabet: usize) -> &[u8] {
    if alphabet == 0 {
        &c.litlen[..]
    } else {
        &c.dist[..]
    }
}

fn lengths_of_mut(c: &mut CodeLengths, alphabet: usize) -> &mut [u8] {
    if alphabet == 0 {
        &mut c.litlen[..]
    } else {
        &mut c.dist[..]
    }
}

fn keep_if_better(
    obj: &Objective<'_>,
    c: CodeLengths,
    best: &mut CodeLengths,
    best_cost: &mut u64,
) {
    if let Some(cost) = obj.cost(&c) {
        if cost < *best_cost {
            *best = c;
            *best_cost = cost;
        }
    }
}

/// [`refine`] and what it did, body bits in the weights' units divided by
/// `scale`.
pub fn refine_reported(
    ll_w: &[u64; NUM_LITLEN],
    d_w: &[u64; NUM_DIST],
    start: &CodeLengths,
    streams: u64,
    scale: u64,
    budget: bool,
) -> (CodeLengths, HeaderAware) {
    let out = refine(ll_w, d_w, start, streams * scale, budget);
    let obj = Objective {
        ll_w,
        d_w,
        header_weight: 0,
        budget,
    };
    let report = HeaderAware {
        start_header_bits: greedy_header_bits(start),
        header_bits: greedy_header_bits(&out),
        start_body_bits: obj.body(start) / scale.max(1),
        body_bits: obj.body(&out) / scale.max(1),
        streams,
    };
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::huffman::limited_code_lengths;

    fn weights(seed: u64) -> ([u64; NUM_LITLEN], [u64; NUM_DIST]) {
        let mut x = seed;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ll = [0u64; NUM_LITLEN];
        for (i, w) in ll.iter_mut().enumerate() {
            // Text-like: a few heavy literals, a long tail of rare ones.
            let heavy = (32..127).contains(&i) || i == 0 || i == 256;
            *w = 1024 * (1 + next() % if heavy { 5000 } else { 20 });
        }
        let mut d = [0u64; NUM_DIST];
        for w in d.iter_mut() {
            *w = 1024 * (1 + next() % 3000);
        }
        (ll, d)
    }

    fn start(ll: &[u64; NUM_LITLEN], d: &[u64; NUM_DIST]) -> CodeLengths {
        CodeLengths {
            litlen: limited_code_lengths(ll, 15).try_into().unwrap(),
            dist: limited_code_lengths(d, 15).try_into().unwrap(),
        }
    }

    #[test]
    fn refined_codes_stay_complete_and_cost_no_more() {
        for seed in 1..6u64 {
            let (ll, d) = weights(seed * 0x9e37_79b9);
            let s = start(&ll, &d);
            for streams in [0u64, 10, 1000, 100_000] {
                let (r, rep) = refine_reported(&ll, &d, &s, streams, 1024, true);
                assert_eq!(kraft(&r.litlen), FULL);
                assert_eq!(kraft(&r.dist), FULL);
                assert!(r
                    .litlen
                    .iter()
                    .chain(&r.dist)
                    .all(|&n| (1..=15).contains(&n)));
                assert!(BitBudget::of(&r).fits());
                let total = |body: u64, hdr: usize| body + streams * hdr as u64;
                assert!(
                    total(rep.body_bits, rep.header_bits)
                        <= total(rep.start_body_bits, rep.start_header_bits),
                    "seed {seed}, {streams} streams: {rep:?}"
                );
                if streams == 0 {
                    // The start is optimal for the body alone.
                    assert_eq!(rep.body_bits, rep.start_body_bits);
                }
                if streams == 100_000 {
                    // Headers dominate: the search must shorten them.
                    assert!(rep.header_bits < rep.start_header_bits, "{rep:?}");
                }
            }
        }
    }

    #[test]
    fn repair_restores_a_complete_code_both_ways() {
        let w = [50u64, 40, 1, 30, 2, 9, 8];
        let complete = [2u8, 2, 3, 3, 3, 4, 4];
        assert_eq!(kraft(&complete), FULL);
        // Under-full (a 2-bit symbol made 3 bits): the heaviest 3-bit
        // symbol other than it becomes 2 bits.
        let mut l = complete;
        l[0] = 3;
        assert!(repair(&mut l, &w, 0));
        assert_eq!(l, [3, 2, 3, 2, 3, 4, 4]);
        // Over-full (a 4-bit symbol made 3 bits): the lightest 3-bit
        // symbol becomes 4 bits.
        let mut l = complete;
        l[6] = 3;
        assert!(repair(&mut l, &w, 6));
        assert_eq!(l, [2, 2, 4, 3, 3, 4, 3]);
        // Nothing to shorten by the missing amount: refused.
        let mut l = [1u8, 2, 2];
        l[1] = 3;
        assert!(!repair(&mut l, &[1, 1, 1], 1));
    }
}
