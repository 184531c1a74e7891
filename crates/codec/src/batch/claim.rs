//! The claim protocol: which engine does which unit of a call.
//!
//! How the work is split: dynamically, by claiming. Each call opens a new
//! epoch on one shared claim counter, an `AtomicU64` holding the epoch and
//! the range `lo..hi` of unclaimed units. The caller (engine 0) takes units
//! one at a time from the bottom of the range, straight from the caller's
//! slices; the workers take them from the top, from copies: the crate
//! forbids `unsafe`, so workers cannot borrow the caller's memory. Every
//! worker whose lane is at home gets copies of the units from `base` on
//! (`base` is half the caller's fair share `n / engines`, at least 1: the
//! workers run out of copies only if the caller does less than half its
//! share, and the caller then does the rest itself), which costs under a
//! microsecond per 4 KiB unit against tens for compressing it. A claim
//! checks the epoch, so a worker that wakes late holding the lane of an
//! older call claims nothing of the current one and just hands its lane
//! back. Each lane lists the units it did in slot order; after the
//! call an owner map says where each unit's result lives, so results come
//! back in the caller's order whoever did them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::MAX_BATCH_SIZE;

/// The claim counter holds `epoch << 16 | lo << 8 | hi`: units `lo..hi` of
/// the batch of that epoch are unclaimed (a batch has at most 32 units).
/// The caller claims from the bottom (`lo`), workers from the top (`hi`).
const EPOCH_SHIFT: u32 = 16;
pub(super) const EPOCH_MASK: u64 = u64::MAX >> EPOCH_SHIFT;
// `lo` and `hi` (up to the batch size) fit their 8 bits, and so does a unit
// index in a lane's `done` list and the owner map.
const _: () = assert!(MAX_BATCH_SIZE <= 0xff);

/// The counter value that opens batch `epoch` of `n` units.
#[inline]
pub(super) fn opened(epoch: u64, n: usize) -> u64 {
    (epoch << EPOCH_SHIFT) | n as u64
}

/// Claims a unit of batch `epoch` from the shared counter: the lowest
/// unclaimed one (`low`, the caller) or the highest (a worker, which holds
/// copies of units `base..` only, so it takes none below `base`). `None`
/// once no such unit is left, or if the counter has moved on to a newer
/// batch (a worker that wakes late with a stale lane).
#[inline]
fn claim(claims: &AtomicU64, epoch: u64, low: bool, base: usize) -> Option<usize> {
    let mut cur = claims.load(Ordering::Acquire);
    loop {
        let lo = ((cur >> 8) & 0xff) as usize;
        let hi = (cur & 0xff) as usize;
        if cur >> EPOCH_SHIFT != epoch || lo >= hi || (!low && hi - 1 < base) {
            return None;
        }
        let (next, unit) = if low {
            (cur + (1 << 8), lo)
        } else {
            (cur - 1, hi - 1)
        };
        match claims.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(unit),
            Err(now) => cur = now,
        }
    }
}

/// A lane's part of the claim protocol: the batch it was staged for and the
/// units it did.
pub(super) struct Ticket {
    claims: Arc<AtomicU64>,
    /// The batch this lane was staged for.
    pub(super) epoch: u64,
    /// The first unit staged in this lane (a worker holds units `base..n`).
    pub(super) base: usize,
    /// The unit index of each slot this lane filled, in slot order.
    pub(super) done: Vec<u8>,
}

impl Ticket {
    pub(super) fn new(claims: Arc<AtomicU64>, slots: usize) -> Ticket {
        Ticket {
            claims,
            epoch: 0,
            base: 0,
            done: Vec::with_capacity(slots),
        }
    }

    pub(super) fn reset(&mut self, epoch: u64, base: usize) {
        self.epoch = epoch;
        self.base = base;
        self.done.clear();
    }

    /// A worker's claim: the highest unclaimed unit it holds.
    #[inline]
    pub(super) fn claim(&self) -> Option<usize> {
        claim(&self.claims, self.epoch, false, self.base)
    }
}

/// How the caller takes the units of one call: from the bottom of the shared
/// counter when workers were given the batch, else simply in order.
pub(super) struct Turn {
    pub(super) shared: bool,
    pub(super) epoch: u64,
    pub(super) n: usize,
    pub(super) next: usize,
}

impl Turn {
    #[inline]
    pub(super) fn next(&mut self, claims: &AtomicU64) -> Option<usize> {
        if self.shared {
            claim(claims, self.epoch, true, 0)
        } else if self.next < self.n {
            self.next += 1;
            Some(self.next - 1)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_epoch_tagged_and_two_ended() {
        let c = AtomicU64::new(opened(5, 4));
        assert_eq!(claim(&c, 4, true, 0), None, "an older epoch claims nothing");
        assert_eq!(claim(&c, 6, false, 0), None, "a newer epoch claims nothing");
        assert_eq!(
            claim(&c, 5, true, 0),
            Some(0),
            "the caller takes the bottom"
        );
        assert_eq!(claim(&c, 5, false, 1), Some(3), "a worker takes the top");
        assert_eq!(claim(&c, 5, false, 2), Some(2));
        assert_eq!(claim(&c, 5, false, 2), None, "below the worker's copies");
        assert_eq!(claim(&c, 5, true, 0), Some(1));
        assert_eq!(claim(&c, 5, true, 0), None, "every unit is claimed");
        assert_eq!(claim(&c, 5, false, 0), None);
        // A lane staged for a 32-unit batch of epoch 5 finds nothing in a
        // 2-unit batch of epoch 6 that has unclaimed units.
        c.store(opened(6, 2), Ordering::Release);
        assert_eq!(claim(&c, 5, false, 0), None);
        assert_eq!(claim(&c, 6, false, 0), Some(1));
        // The epoch wraps within its bits without touching the range.
        let top = EPOCH_MASK;
        c.store(opened(top, 32), Ordering::Release);
        assert_eq!(claim(&c, top, false, 0), Some(31));
        assert_eq!(claim(&c, top, true, 0), Some(0));
        assert_eq!(claim(&c, 0, true, 0), None);
    }

    #[test]
    fn concurrent_claims_take_each_unit_once() {
        let c = Arc::new(AtomicU64::new(0));
        for epoch in 1..200u64 {
            let n = 1 + (epoch as usize % MAX_BATCH_SIZE);
            let base = (epoch as usize % 3).min(n - 1);
            c.store(opened(epoch, n), Ordering::Release);
            // One thread claims from the bottom, two from the top.
            let got: Vec<Vec<usize>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..3)
                    .map(|t| {
                        let c = &c;
                        s.spawn(move || {
                            let mut mine = Vec::new();
                            while let Some(i) = claim(c, epoch, t == 0, base) {
                                mine.push(i);
                            }
                            mine
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(got[1].iter().chain(&got[2]).all(|&i| i >= base));
            let mut all: Vec<usize> = got.concat();
            all.sort_unstable();
            // The bottom claimer takes whatever the top ones leave, so every
            // unit is claimed exactly once.
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "epoch {epoch}");
        }
    }
}
