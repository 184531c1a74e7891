//! The run-split DP of the header search: for one code-length code, the
//! fewest body bits coding the code lengths in each residue mod 8, every
//! way runs split into repeat codes 16, 17 and 18 considered ([`Dp`]).
//! Exact; the byte-aligned search (`align.rs`) runs it for each code it
//! tries, and the fewest-bits one (`fewest.rs`) too.

use super::*;
use crate::constants::{NUM_DIST, NUM_LITLEN};

#[cfg(test)]
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

/// What [`how`] put in a key: the item's start, the residue before it and
/// its `x`.
fn parts(key: u64) -> (usize, usize, u8) {
    (
        (key >> 7 & 511) as usize,
        (key >> 4 & 7) as usize,
        (key & 15) as u8,
    )
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
    /// each) that end there: the window of each residue first drops the
    /// positions that no longer reach j, then takes position j - 11.
    fn pull_zero_runs(
        windows: &mut [Window; 8],
        same: &[usize],
        seq: &[u8],
        j: usize,
        b18: u64,
        keys: &mut [[u64; 8]],
    ) {
        // A run of zeros that ends at j holds seq[j - 1]: when that is not
        // zero, no item ends here and position j - 11 reaches nothing (the
        // windows drop their dead positions at the next zero).
        if j == 0 || seq[j - 1] != 0 {
            return;
        }
        let live = |i: usize| i + 138 >= j && i + same[i] >= j;
        for w in windows.iter_mut() {
            w.drop_dead(live);
        }
        if let Some(i) = j.checked_sub(11).filter(|&i| seq[i] == 0 && same[i] >= 11) {
            for (r, w) in windows.iter_mut().enumerate() {
                let cost = keys[i][r] >> KEY_SHIFT;
                if cost < UNREACHED {
                    w.push(cost << KEY_SHIFT | how(i, r, 1));
                }
            }
        }
        let to = &mut keys[j];
        for (r, w) in windows.iter().enumerate() {
            if let Some(key) = w.front() {
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
    /// (reached), from its key: its symbol, the position it starts at and
    /// the residue before it.
    fn last(&self, j: usize, r: usize) -> (u8, usize, usize) {
        let (i, pr, x) = parts(self.keys[j][r]);
        let symbol = match j - i {
            1 => x,
            11.. => 18,
            _ => 16 + x,
        };
        (symbol, i, pr)
    }

    /// [`Dp::last`] as an item, with the residue before it.
    fn back(&self, j: usize, r: usize) -> (ClItem, usize) {
        let (symbol, i, pr) = self.last(j, r);
        let extra = (j - i) as u8 - RUN_BASE[symbol as usize];
        (ClItem { symbol, extra }, pr)
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
    /// code-length symbol: [`symbol_counts`] of [`Dp::items`], without them
    /// (a walk for each residue, every time a code-length code is tried).
    pub(super) fn counts(&self, mut r: usize) -> [u64; NUM_CODE_LEN_SYMBOLS] {
        let mut used = [0u64; NUM_CODE_LEN_SYMBOLS];
        let mut j = self.n;
        while j > 0 {
            let (symbol, i, pr) = self.last(j, r);
            used[symbol as usize] += 1;
            (j, r) = (i, pr);
        }
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

/// The longest sequence of lengths a header codes.
const MAX_SEQ: usize = NUM_LITLEN + NUM_DIST;

/// Runs within each segment (`[0, hlit)` and `[hlit, len)`): equal
/// lengths from i on, and lengths equal to seq[i - 1] from i on (0 at a
/// segment start). Arrays of the longest sequence, as the DP had them
/// before it moved here: no allocation a run.
fn runs(seq: &[u8], hlit: usize) -> ([usize; MAX_SEQ + 1], [usize; MAX_SEQ + 1]) {
    let n = seq.len();
    assert!(n <= MAX_SEQ, "{n} lengths");
    let mut same = [0usize; MAX_SEQ + 1];
    let mut prev_run = [0usize; MAX_SEQ + 1];
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

/// A sliding-window minimum: the keys of positions in increasing position
/// (a key holds its position, [`how`]), rising from the front (a later
/// position with a larger key is never the minimum while both are in).
/// At most 128 positions are live in a window (11 to 138 before j), and
/// the dead ones go before a position comes in, so a ring of 128 indexed
/// by a byte's low bits never overflows.
struct Window {
    ring: [u64; 128],
    head: u8,
    tail: u8,
}

impl Window {
    const fn new() -> Window {
        Window {
            ring: [0; 128],
            head: 0,
            tail: 0,
        }
    }

    /// Drops front positions for which `live` is false: the positions not
    /// live are older than every live one.
    fn drop_dead(&mut self, live: impl Fn(usize) -> bool) {
        while self.head != self.tail && !live(parts(self.ring[(self.head & 127) as usize]).0) {
            self.head = self.head.wrapping_add(1);
        }
    }

    /// Adds `key`, of a position after every position in.
    fn push(&mut self, key: u64) {
        while self.tail != self.head && self.ring[(self.tail.wrapping_sub(1) & 127) as usize] > key
        {
            self.tail = self.tail.wrapping_sub(1);
        }
        debug_assert!(self.tail.wrapping_sub(self.head) < 128, "a full window");
        self.ring[(self.tail & 127) as usize] = key;
        self.tail = self.tail.wrapping_add(1);
    }

    /// The smallest key in, if any.
    fn front(&self) -> Option<u64> {
        (self.head != self.tail).then(|| self.ring[(self.head & 127) as usize])
    }
}
