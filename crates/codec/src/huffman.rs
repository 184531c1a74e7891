//! Optimal length-limited Huffman code lengths (package-merge) and canonical
//! RFC 1951 code values.
//!
//! This is the one code builder of cannery: dynamic blocks, block headers and
//! the trainer all call [`limited_code_lengths`]. It does not smooth counts or
//! decide which symbols must be coded; callers do that.

/// Optimal code lengths for `counts` with no length above `max_len`.
///
/// Symbols with a zero count get length 0. If exactly one symbol has a
/// non-zero count it gets length 1 (a one-symbol code cannot have length 0 in
/// deflate). With two or more used symbols the result is a complete prefix
/// code (Kraft sum exactly 1) minimising `sum(count * length)`.
///
/// Ties are broken by symbol index, so the result is deterministic.
///
/// # Panics
/// If more symbols are used than `max_len` bits can code (`used > 2^max_len`)
/// or `max_len` is 0 or above 31. Deflate alphabets never come close.
pub fn limited_code_lengths(counts: &[u64], max_len: u8) -> Vec<u8> {
    assert!(
        (1..=31).contains(&max_len),
        "max_len {max_len} out of range"
    );
    let mut lengths = vec![0u8; counts.len()];
    let mut leaves: Vec<(u64, usize)> = counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(s, &c)| (c, s))
        .collect();
    match leaves.len() {
        0 => return lengths,
        1 => {
            lengths[leaves[0].1] = 1;
            return lengths;
        }
        n => assert!(
            n as u64 <= 1u64 << max_len,
            "{n} symbols do not fit in {max_len} bits"
        ),
    }
    leaves.sort_unstable();
    package_merge(&leaves, max_len, &mut lengths);
    lengths
}

/// One item of a package-merge list: a leaf, or a package of two items of the
/// previous (deeper) list.
#[derive(Clone, Copy)]
enum Item {
    Leaf(usize),
    Package(usize),
}

/// Package-merge (Larmore & Hirschberg): `leaves` sorted by (count, symbol).
fn package_merge(leaves: &[(u64, usize)], max_len: u8, lengths: &mut [u8]) {
    let n = leaves.len();
    // lists[0] is the deepest level (length max_len); each next list merges
    // packages of the previous one with the leaves.
    let mut lists: Vec<Vec<(u64, Item)>> = Vec::with_capacity(max_len as usize);
    lists.push(
        leaves
            .iter()
            .enumerate()
            .map(|(i, &(w, _))| (w, Item::Leaf(i)))
            .collect(),
    );
    for _ in 1..max_len {
        let prev = lists.last().expect("at least one list");
        let mut merged = Vec::with_capacity(n + prev.len() / 2);
        let mut li = 0;
        let mut pi = 0;
        let packages = prev.len() / 2;
        while li < n || pi < packages {
            let pw = if pi < packages {
                prev[2 * pi].0 + prev[2 * pi + 1].0
            } else {
                u64::MAX
            };
            if li < n && leaves[li].0 <= pw {
                merged.push((leaves[li].0, Item::Leaf(li)));
                li += 1;
            } else {
                merged.push((pw, Item::Package(pi)));
                pi += 1;
            }
        }
        lists.push(merged);
    }
    // Every leaf occurrence among the first 2n-2 items of the top list adds one
    // to that symbol's length.
    let top = lists.len() - 1;
    let mut stack: Vec<(usize, usize)> = (0..2 * n - 2).map(|i| (top, i)).collect();
    while let Some((level, i)) = stack.pop() {
        match lists[level][i].1 {
            Item::Leaf(l) => lengths[leaves[l].1] += 1,
            Item::Package(p) => {
                stack.push((level - 1, 2 * p));
                stack.push((level - 1, 2 * p + 1));
            }
        }
    }
}

/// Canonical code values (RFC 1951 §3.2.2) for `lengths`, MSB-first integers:
/// the first bit sent is the most significant of the `len` bits.
/// Symbols of length 0 get code 0.
pub fn canonical_codes(lengths: &[u8]) -> Vec<u16> {
    let mut count = [0u16; 16];
    for &l in lengths {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                0
            } else {
                let c = next[l as usize];
                next[l as usize] = next[l as usize].wrapping_add(1);
                c
            }
        })
        .collect()
}

/// `code` with its low `len` bits mirrored: what an LSB-first writer emits.
#[inline]
pub fn reverse_bits(code: u16, len: u8) -> u16 {
    if len == 0 {
        0
    } else {
        code.reverse_bits() >> (16 - len as u32)
    }
}

/// Kraft sum of `lengths` scaled by 2^15: 32768 means complete, more means
/// over-subscribed, less means incomplete. Lengths must be 0..=15 (check
/// them first); length 0 means "no code".
pub fn kraft_sum(lengths: &[u8]) -> u64 {
    debug_assert!(lengths.iter().all(|&l| l <= 15));
    lengths
        .iter()
        .filter(|&&l| l > 0)
        .map(|&l| 1u64 << (15 - l as u32))
        .sum()
}

/// Total cost in bits of coding `counts` with `lengths`.
pub fn cost(counts: &[u64], lengths: &[u8]) -> u64 {
    counts
        .iter()
        .zip(lengths)
        .map(|(&c, &l)| c * l as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Cheapest cost over all complete codes with lengths 1..=max_len (brute force).
    fn brute_force_cost(counts: &[u64], max_len: u8) -> u64 {
        fn go(i: usize, counts: &[u64], max_len: u8, kraft: u64, acc: u64, best: &mut u64) {
            let full = 1u64 << max_len;
            if kraft > full || acc >= *best {
                return;
            }
            if i == counts.len() {
                if kraft == full {
                    *best = acc;
                }
                return;
            }
            for l in 1..=max_len {
                go(
                    i + 1,
                    counts,
                    max_len,
                    kraft + (1 << (max_len - l)),
                    acc + counts[i] * l as u64,
                    best,
                );
            }
        }
        let mut best = u64::MAX;
        go(0, counts, max_len, 0, 0, &mut best);
        best
    }

    #[test]
    fn textbook_example() {
        // Classic unlimited Huffman lengths for these counts are 1,2,3,4,4.
        let l = limited_code_lengths(&[10, 6, 3, 1, 1], 15);
        assert_eq!(l, vec![1, 2, 3, 4, 4]);
        // With a limit of 3 the best complete code is 1,3,3,3,3 (cost 43).
        let l = limited_code_lengths(&[10, 6, 3, 1, 1], 3);
        assert_eq!(l, vec![1, 3, 3, 3, 3]);
        assert_eq!(kraft_sum(&l), 32768);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(limited_code_lengths(&[0, 0, 0], 15), vec![0, 0, 0]);
        assert_eq!(limited_code_lengths(&[0, 7, 0], 15), vec![0, 1, 0]);
        assert_eq!(limited_code_lengths(&[1, 1], 1), vec![1, 1]);
    }

    #[test]
    fn rfc1951_canonical_example() {
        // RFC 1951 §3.2.2: lengths (3,3,3,3,3,2,4,4) give F=00, A=010 ... H=1111.
        let codes = canonical_codes(&[3, 3, 3, 3, 3, 2, 4, 4]);
        assert_eq!(
            codes,
            vec![0b010, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111]
        );
        assert_eq!(reverse_bits(0b110, 3), 0b011);
        assert_eq!(reverse_bits(0b1, 1), 0b1);
    }

    proptest! {
        #[test]
        fn package_merge_is_optimal_against_brute_force(
            counts in proptest::collection::vec(1u64..50, 2..7),
            max_len in 3u8..5,
        ) {
            prop_assume!(counts.len() as u64 <= 1 << max_len);
            let l = limited_code_lengths(&counts, max_len);
            prop_assert!(l.iter().all(|&x| (1..=max_len).contains(&x)));
            prop_assert_eq!(kraft_sum(&l), 32768);
            prop_assert_eq!(cost(&counts, &l), brute_force_cost(&counts, max_len));
        }

        #[test]
        fn lengths_are_complete_and_limited(
            counts in proptest::collection::vec(0u64..100_000, 2..300),
            max_len in 9u8..=15,
        ) {
            let l = limited_code_lengths(&counts, max_len);
            let used = counts.iter().filter(|&&c| c > 0).count();
            for (c, len) in counts.iter().zip(&l) {
                prop_assert_eq!(*c == 0, *len == 0);
                prop_assert!(*len <= max_len);
            }
            if used >= 2 {
                prop_assert_eq!(kraft_sum(&l), 32768);
            }
        }
    }
}
