//! Symbol weights → code lengths under the constraints of the target:
//! optimal length-limited codes (the codec's package-merge), lengths ≤ 15,
//! every weighted symbol coded, complete codes, and optionally QPL's 56-bit
//! budget. What the budget is, and the cheapest code that fits it, belong
//! to the codec's table rules ([`cannery_codec::table::rules`]); this file
//! only chooses between the free code and the budgeted one. Which symbols
//! get weights, and how much, is [`crate::smoothing`]'s job (under
//! `qpl_compatible` every one of the 286 + 30 symbols gets one).

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN};
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::table::rules::{budget_lengths, BitBudget};
use cannery_codec::CodeLengths;

/// Optimal code lengths for the weights, no code longer than `max_len`
/// (15 for deflate and IAA), and within QPL's 56-bit budget when
/// `qpl_compatible`. Symbols with weight 0 get no code. Each alphabet with
/// at least two weighted symbols gets a complete code.
pub fn build_lengths(
    ll_w: &[u64; NUM_LITLEN],
    d_w: &[u64; NUM_DIST],
    max_len: u8,
    qpl_compatible: bool,
) -> CodeLengths {
    let free = CodeLengths {
        litlen: limited_code_lengths(ll_w, max_len)
            .try_into()
            .expect("286 lengths"),
        dist: limited_code_lengths(d_w, max_len)
            .try_into()
            .expect("30 lengths"),
    };
    if !qpl_compatible || BitBudget::of(&free).fits() {
        return free;
    }
    budget_lengths(ll_w, d_w, max_len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::huffman::{cost, kraft_sum};
    use proptest::prelude::*;

    /// Cheapest complete code with lengths 1..=max_len, by exhaustive search.
    fn brute_force(counts: &[u64], max_len: u8) -> u64 {
        fn go(i: usize, c: &[u64], m: u8, kraft: u64, acc: u64, best: &mut u64) {
            let full = 1u64 << m;
            if kraft > full || acc >= *best {
                return;
            }
            if i == c.len() {
                if kraft == full {
                    *best = acc;
                }
                return;
            }
            for l in 1..=m {
                go(
                    i + 1,
                    c,
                    m,
                    kraft + (1 << (m - l)),
                    acc + c[i] * l as u64,
                    best,
                );
            }
        }
        let mut best = u64::MAX;
        go(0, counts, max_len, 0, 0, &mut best);
        best
    }

    proptest! {
        /// The code builder the trainer relies on is optimal on small alphabets.
        #[test]
        fn package_merge_matches_brute_force(
            counts in proptest::collection::vec(1u64..1000, 2..8),
            max_len in 3u8..6,
        ) {
            prop_assume!(counts.len() <= 1 << max_len);
            let l = limited_code_lengths(&counts, max_len);
            prop_assert_eq!(cost(&counts, &l), brute_force(&counts, max_len));
        }

        /// Trained codes are complete, within limits, and code every weighted symbol.
        #[test]
        fn built_codes_are_complete_and_limited(
            ll in proptest::collection::vec(0u64..1_000_000, NUM_LITLEN),
            d in proptest::collection::vec(0u64..1_000_000, 24),
            skew in 0u32..40,
            qpl in any::<bool>(),
        ) {
            let mut ll_w = [0u64; NUM_LITLEN];
            for (i, (w, v)) in ll_w.iter_mut().zip(&ll).enumerate() {
                // Heavy skew makes unlimited Huffman codes far longer than 15.
                *w = if i % 7 == 0 { (v + 1) << skew.min(30) } else { v + 1 };
            }
            let mut d_w = [0u64; NUM_DIST];
            for (w, v) in d_w.iter_mut().zip(&d) {
                *w = v + 1;
            }
            let l = build_lengths(&ll_w, &d_w, 15, qpl);
            prop_assert_eq!(kraft_sum(&l.litlen), 32768);
            prop_assert_eq!(kraft_sum(&l.dist), 32768);
            prop_assert!(l.litlen.iter().all(|&x| (1..=15).contains(&x)));
            prop_assert!(l.dist[..24].iter().all(|&x| (1..=15).contains(&x)));
            prop_assert!(l.dist[24..].iter().all(|&x| x == 0));
            if qpl {
                prop_assert!(BitBudget::of(&l).fits());
            }
        }
    }

    #[test]
    fn qpl_rule_is_enforced_at_the_least_cost() {
        // Geometric weights force 15-bit codes in both alphabets.
        let mut ll_w = [0u64; NUM_LITLEN];
        for (i, w) in ll_w.iter_mut().enumerate() {
            *w = 1 + (1u64 << (40 - (i % 40)));
        }
        let mut d_w = [0u64; NUM_DIST];
        for (i, w) in d_w.iter_mut().enumerate().take(24) {
            *w = 1 + (1u64 << (40 - i));
        }
        let free = build_lengths(&ll_w, &d_w, 15, false);
        assert!(!BitBudget::of(&free).fits(), "test needs a violating code");
        let l = build_lengths(&ll_w, &d_w, 15, true);
        assert!(BitBudget::of(&l).fits());
        // No better pair of limits satisfies the rule.
        let weighted_cost = |w: &[u64], l: &[u8]| -> u128 {
            w.iter().zip(l).map(|(&w, &l)| w as u128 * l as u128).sum()
        };
        let cost_of =
            |l: &CodeLengths| weighted_cost(&ll_w, &l.litlen) + weighted_cost(&d_w, &l.dist);
        for a in 9..=15u8 {
            for b in 5..=15u8 {
                let cand = CodeLengths {
                    litlen: limited_code_lengths(&ll_w, a).try_into().unwrap(),
                    dist: limited_code_lengths(&d_w, b).try_into().unwrap(),
                };
                if BitBudget::of(&cand).fits() {
                    assert!(
                        cost_of(&l) <= cost_of(&cand),
                        "limits {a}/{b} beat the choice"
                    );
                }
            }
        }
        // And it is no worse than QPL's own 13/12 fallback.
        let qpl_fallback = CodeLengths {
            litlen: limited_code_lengths(&ll_w, 13).try_into().unwrap(),
            dist: limited_code_lengths(&d_w, 12).try_into().unwrap(),
        };
        assert!(cost_of(&l) <= cost_of(&qpl_fallback));
    }
}
