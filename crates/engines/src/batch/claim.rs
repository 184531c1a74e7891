//! The claim protocol: which worker does which unit of a call.
//!
//! How the work is split: dynamically, by claiming. Each call opens a new
//! epoch on one shared claim counter, an `AtomicU64` holding the epoch and
//! the range `lo..hi` of unclaimed units. The caller (worker 0) takes units
//! one at a time from the bottom of the range, workers from the top. Every
//! worker reads its units (and, decompressing, writes its output slots) in
//! the caller's memory through the call's loan (`loan.rs`), and a claim is
//! what entitles a worker to touch unit `i` at all. A claim checks the
//! epoch, so a worker that wakes late holding the lane of an older call
//! claims nothing of the current one and just hands its lane back. Each
//! lane lists the units it did in slot order; after the call an owner map
//! says where each unit's result lives, so results come back in the
//! caller's order whoever did them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::loan::{Loan, LoanSlot};
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

/// What the workers of one batch object share: the claim counter, and
/// where the loan of the call it counts lives (the caller's stack).
pub(super) struct Board {
    claims: AtomicU64,
    loan: LoanSlot,
}

impl Board {
    pub(super) fn new() -> Board {
        Board {
            claims: AtomicU64::new(0),
            loan: LoanSlot::empty(),
        }
    }

    /// Opens call `epoch` of `n` units, lent by `loan`: claims of that epoch
    /// now succeed, and a lane that made one may read `loan`
    /// ([`Ticket::loan`]). The caller keeps `loan` alive, and the call open,
    /// until every lane that may hold a claimed unit is home
    /// (`Workers::call`).
    pub(super) fn open(&self, epoch: u64, n: usize, loan: &Loan) {
        self.loan.publish(loan);
        // Release: the loan's address before the units it lends.
        self.claims.store(opened(epoch, n), Ordering::Release);
    }

    /// Closes call `epoch`: no unit of it is left to claim.
    pub(super) fn close(&self, epoch: u64) {
        self.claims.store(opened(epoch, 0), Ordering::Release);
    }
}

/// Claims a unit of batch `epoch` from the shared counter: the lowest
/// unclaimed one (`low`, the caller) or the highest (a worker). `None` once
/// no unit is left, or if the counter has moved on to a newer batch (a
/// worker that wakes late with a stale lane).
#[inline]
fn claim(claims: &AtomicU64, epoch: u64, low: bool) -> Option<usize> {
    let mut cur = claims.load(Ordering::Acquire);
    loop {
        let lo = ((cur >> 8) & 0xff) as usize;
        let hi = (cur & 0xff) as usize;
        if cur >> EPOCH_SHIFT != epoch || lo >= hi {
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
    board: Arc<Board>,
    /// The batch this lane was lent.
    pub(super) epoch: u64,
    /// The unit index of each slot this lane filled, in slot order.
    pub(super) done: Vec<u8>,
}

impl Ticket {
    pub(super) fn new(board: Arc<Board>, slots: usize) -> Ticket {
        Ticket {
            board,
            epoch: 0,
            done: Vec::with_capacity(slots),
        }
    }

    pub(super) fn reset(&mut self, epoch: u64) {
        self.epoch = epoch;
        self.done.clear();
    }

    /// A worker's claim: the highest unclaimed unit.
    #[inline]
    pub(super) fn claim(&self) -> Option<usize> {
        claim(&self.board.claims, self.epoch, false)
    }

    /// The loan of the call whose unit this lane claimed.
    ///
    /// # Safety
    /// This lane claimed a unit of its epoch's call ([`Ticket::claim`]
    /// returned `Some`) and has not gone home since: that call has not
    /// ended, so the board still points at its loan, which is alive.
    #[allow(unsafe_code)]
    #[inline]
    pub(super) unsafe fn loan<'a>(&self) -> &'a Loan {
        // SAFETY: this function's contract.
        unsafe { self.board.loan.get() }
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
    pub(super) fn next(&mut self, board: &Board) -> Option<usize> {
        if self.shared {
            claim(&board.claims, self.epoch, true)
        } else if self.next < self.n {
            self.next += 1;
            Some(self.next - 1)
        } else {
            None
        }
    }
}

/// The caller's turn in call `epoch` of `n` units shared with workers.
#[cfg(test)]
pub(super) fn caller_turn(epoch: u64, n: usize) -> Turn {
    Turn {
        shared: true,
        epoch,
        n,
        next: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_epoch_tagged_and_two_ended() {
        let c = AtomicU64::new(opened(5, 4));
        assert_eq!(claim(&c, 4, true), None, "an older epoch claims nothing");
        assert_eq!(claim(&c, 6, false), None, "a newer epoch claims nothing");
        assert_eq!(claim(&c, 5, true), Some(0), "the caller takes the bottom");
        assert_eq!(claim(&c, 5, false), Some(3), "a worker takes the top");
        assert_eq!(claim(&c, 5, false), Some(2));
        assert_eq!(claim(&c, 5, true), Some(1));
        assert_eq!(claim(&c, 5, true), None, "every unit is claimed");
        assert_eq!(claim(&c, 5, false), None);
        // A lane staged for a 32-unit batch of epoch 5 finds nothing in a
        // 2-unit batch of epoch 6 that has unclaimed units.
        c.store(opened(6, 2), Ordering::Release);
        assert_eq!(claim(&c, 5, false), None);
        assert_eq!(claim(&c, 6, false), Some(1));
        // The epoch wraps within its bits without touching the range.
        let top = EPOCH_MASK;
        c.store(opened(top, 32), Ordering::Release);
        assert_eq!(claim(&c, top, false), Some(31));
        assert_eq!(claim(&c, top, true), Some(0));
        assert_eq!(claim(&c, 0, true), None);
        // A closed counter (a call draining after an error) gives nothing.
        c.store(opened(top, 0), Ordering::Release);
        assert_eq!(claim(&c, top, false), None);
        assert_eq!(claim(&c, top, true), None);
    }

    #[test]
    fn concurrent_claims_take_each_unit_once() {
        let c = Arc::new(AtomicU64::new(0));
        for epoch in 1..200u64 {
            let n = 1 + (epoch as usize % MAX_BATCH_SIZE);
            c.store(opened(epoch, n), Ordering::Release);
            // One thread claims from the bottom, two from the top.
            let got: Vec<Vec<usize>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..3)
                    .map(|t| {
                        let c = &c;
                        s.spawn(move || {
                            let mut mine = Vec::new();
                            while let Some(i) = claim(c, epoch, t == 0) {
                                mine.push(i);
                            }
                            mine
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut all: Vec<usize> = got.concat();
            all.sort_unstable();
            // The bottom claimer takes whatever the top ones leave, so every
            // unit is claimed exactly once.
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "epoch {epoch}");
        }
    }
}
