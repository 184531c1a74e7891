//! Binary-tree match finding for the Best level (libdeflate's
//! `bt_matchfinder`): each hash bucket holds a tree of its earlier
//! positions, ordered by the strings that start there.
//!
//! A step at a position inserts it and reports its matches (every length a
//! nearer position cannot reach) into `candidates`; pricing them is
//! `optimal.rs`'s job.

use super::{MatchFinder, BEST_NICE, BEST_TREE_DEPTH, NIL};
use crate::constants::{MIN_MATCH, PAGE_SIZE};

impl MatchFinder {
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
    /// nearest first. Visits at most [`BEST_TREE_DEPTH`] nodes; at a match of
    /// [`BEST_NICE`] (or `max`) bytes it stops, giving `i` that node's
    /// children. Returns the longest length seen (2 if none reaches 3).
    pub(super) fn bt_advance(&mut self, i: usize, max: usize) -> usize {
        const KIDS_MASK: usize = 2 * PAGE_SIZE - 1;
        let nice = BEST_NICE.min(max);
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
        for _ in 0..BEST_TREE_DEPTH {
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
}
