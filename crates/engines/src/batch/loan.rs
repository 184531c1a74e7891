//! The loan: a call's units (and a decompression call's output slots) lent
//! to the worker lanes as raw pointers, so that workers read the caller's
//! units in place and write the caller's pages themselves, instead of the
//! caller copying units in and results out.
//!
//! Why it is sound is the workers' protocol, not this type: a lane touches
//! unit `i` (and output slot `i`) only after claiming `i` under the call's
//! epoch (`claim.rs`), each unit is claimed once, and a call does not end
//! (returning, failing, or unwinding from a panic of the caller's codec)
//! while a lane that may hold a claimed unit is away (`worker.rs`:
//! `Workers::call`). The loan itself stays on the caller's stack; the
//! board (`claim.rs`) holds its address for the call, and a lane reads that
//! address only after a successful claim, so never once the call has ended.
//!
//! Measured (`cargo bench -p cannery-benches --bench batch`, and
//! `cannery zswap-sim --engines 2`): see BENCHMARKS.md, "Batches".

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, Ordering};

use super::MAX_BATCH_SIZE;
use cannery_codec::constants::PAGE_SIZE;

/// A call's units and output slots as raw pointers, and the order the
/// claims take the units in.
pub(super) struct Loan {
    units: [(*const u8, usize); MAX_BATCH_SIZE],
    n: usize,
    /// Claim `k` is unit `order[k]`: a permutation of `0..n`.
    order: [u8; MAX_BATCH_SIZE],
    /// Start of the caller's output buffer (null when there is none), with
    /// room for `n` slots of 4 KiB.
    out: *mut u8,
}

impl Loan {
    fn none() -> Loan {
        Loan {
            units: [(std::ptr::null(), 0); MAX_BATCH_SIZE],
            n: 0,
            order: std::array::from_fn(|k| k as u8),
            out: std::ptr::null_mut(),
        }
    }

    /// Lends `units`, and `out` (at least `units.len()` slots of 4 KiB) if
    /// given. The caller must not use `out` itself until the call ends: it
    /// writes its own slots through [`Loan::out_slot`] too, so that every
    /// access derives from this one pointer.
    pub(super) fn new(units: &[&[u8]], out: Option<&mut [u8]>) -> Loan {
        let mut loan = Loan::none();
        assert!(units.len() <= MAX_BATCH_SIZE);
        for (p, u) in loan.units.iter_mut().zip(units) {
            *p = (u.as_ptr(), u.len());
        }
        loan.n = units.len();
        if let Some(out) = out {
            assert!(out.len() >= units.len() * PAGE_SIZE);
            loan.out = out.as_mut_ptr();
        }
        loan
    }

    /// Claims take the longest units first, from both ends: the caller
    /// claims from the bottom of the counter and the workers from the top
    /// (`claim.rs`), so the shortest units are claimed last and the
    /// workers finish closer together. For decompression, where a stream's
    /// length stands for its decode time (measured: see BENCHMARKS.md,
    /// "Batches").
    pub(super) fn longest_first(&mut self) {
        let n = self.n;
        let mut by_len: [u8; MAX_BATCH_SIZE] = std::array::from_fn(|k| k as u8);
        by_len[..n].sort_unstable_by_key(|&i| std::cmp::Reverse(self.units[i as usize].1));
        for (rank, &i) in by_len[..n].iter().enumerate() {
            // Ranks 0, 1, 2, 3, … go to claims 0, n − 1, 1, n − 2, ….
            let k = if rank % 2 == 0 {
                rank / 2
            } else {
                n - 1 - rank / 2
            };
            self.order[k] = i;
        }
    }

    /// The unit claim `k` stands for.
    #[inline]
    pub(super) fn claimed(&self, k: usize) -> usize {
        assert!(k < self.n);
        self.order[k] as usize
    }

    /// Unit `i`.
    ///
    /// # Safety
    /// The call that made this loan has not ended, and this worker claimed
    /// unit `i` of it (or is the caller).
    #[inline]
    pub(super) unsafe fn unit<'a>(&self, i: usize) -> &'a [u8] {
        assert!(i < self.n);
        let (p, len) = self.units[i];
        // SAFETY: `p..p + len` is the caller's `&[u8]`, alive until the call
        // ends (this function's contract); shared reads only.
        unsafe { std::slice::from_raw_parts(p, len) }
    }

    /// Output slot `i` (4 KiB).
    ///
    /// # Safety
    /// As [`Loan::unit`]; besides, only the worker that claimed `i` calls
    /// this for `i`, once per call, so the slot is not aliased.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn out_slot<'a>(&self, i: usize) -> &'a mut [u8] {
        assert!(i < self.n && !self.out.is_null());
        // SAFETY: slot `i` lies inside the caller's `&mut [u8]` (checked in
        // `new`), alive until the call ends; one worker writes it (the
        // claimer), and the caller reads it only after that worker's lane
        // is back.
        unsafe { std::slice::from_raw_parts_mut(self.out.add(i * PAGE_SIZE), PAGE_SIZE) }
    }
}

/// Where the loan of the current call lives: the caller's stack, for the
/// call's duration. Workers read the address only after claiming a unit of
/// the call (`claim.rs`: `Ticket::loan`); between calls it dangles, unread.
/// `Loan` is not `Sync` (it holds raw pointers), but sharing it this way is
/// sound: while lent nobody writes it, and what its pointers reach is
/// governed by the claims (module doc).
pub(super) struct LoanSlot(AtomicPtr<Loan>);

impl LoanSlot {
    pub(super) fn empty() -> LoanSlot {
        LoanSlot(AtomicPtr::new(std::ptr::null_mut()))
    }

    /// Points the slot at `loan` (before the call's units are opened to
    /// claims, which publish it).
    pub(super) fn publish(&self, loan: &Loan) {
        self.0
            .store(loan as *const Loan as *mut Loan, Ordering::Relaxed);
    }

    /// The loan last published.
    ///
    /// # Safety
    /// The call that published it has not ended (see `Ticket::loan`).
    #[inline]
    pub(super) unsafe fn get<'a>(&self) -> &'a Loan {
        // SAFETY: the pointer was made from a `&Loan` that is alive until
        // the call ends (this function's contract), and a loan is never
        // written while it is lent.
        unsafe { &*self.0.load(Ordering::Acquire) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The claims of a longest-first loan: every unit once, the longest at
    /// the two ends of the counter, lengths falling towards the middle from
    /// either end, so the last claims (from the middle) are the shortest.
    #[test]
    fn longest_first_claims_every_unit_once_longest_at_both_ends() {
        let lens: [&[usize]; 5] = [&[5], &[1, 9], &[3, 7, 7, 1, 8, 2, 6, 4], &[4; 5], &[]];
        for lens in lens {
            let bytes: Vec<Vec<u8>> = lens.iter().map(|&l| vec![0; l]).collect();
            let units: Vec<&[u8]> = bytes.iter().map(|b| &b[..]).collect();
            let mut loan = Loan::new(&units, None);
            loan.longest_first();
            let n = units.len();
            let order: Vec<usize> = (0..n).map(|k| loan.claimed(k)).collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..n).collect::<Vec<_>>(),
                "a permutation of {lens:?}"
            );
            let len = |k: usize| lens[order[k]];
            // From the bottom end up to the middle, and from the top end
            // down to it, lengths never grow.
            let middle = n.div_ceil(2);
            for k in 1..middle {
                assert!(len(k - 1) >= len(k), "{lens:?}: {order:?}");
            }
            for k in middle..n.saturating_sub(1) {
                assert!(len(k + 1) >= len(k), "{lens:?}: {order:?}");
            }
            if let Some(&longest) = lens.iter().max() {
                assert_eq!(len(0), longest, "the longest is claimed first");
            }
        }
    }

    #[test]
    fn a_plain_loan_claims_in_order() {
        let bytes = [vec![0u8; 1], vec![0; 9], vec![0; 3]];
        let units: Vec<&[u8]> = bytes.iter().map(|b| &b[..]).collect();
        let loan = Loan::new(&units, None);
        assert_eq!(
            (0..3).map(|k| loan.claimed(k)).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }
}
