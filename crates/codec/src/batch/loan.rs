//! The loan: a call's units (and a decompression call's output slots) lent
//! to the worker lanes as raw pointers, so that workers read the caller's
//! units and write the caller's pages in place instead of through copies.
//!
//! Why it is sound is the engines' protocol, not this type: a lane touches
//! unit `i` (and output slot `i`) only after claiming `i` under the call's
//! epoch (`claim.rs`), each unit is claimed once, and a call does not end
//! (returning, failing, or unwinding from a panic of the caller's codec)
//! while a lane that may hold a claimed unit is away (`engine.rs`:
//! `Engines::call`). A lane keeps its loan after the call, but a stale
//! epoch claims nothing, so it never reads it again.
//!
//! Measured (`cargo bench -p cannery-benches --bench batch`, and
//! `cannery zswap-sim --engines 2`): see BENCHMARKS.md, "Batches".

#![allow(unsafe_code)]

use super::MAX_BATCH_SIZE;
use crate::constants::PAGE_SIZE;

/// A call's units and output slots as raw pointers.
#[derive(Clone, Copy)]
pub(super) struct Loan {
    units: [(*const u8, usize); MAX_BATCH_SIZE],
    n: usize,
    /// Start of the caller's output buffer (null when there is none), with
    /// room for `n` slots of 4 KiB.
    out: *mut u8,
}

// SAFETY: a loan is only pointers; the engines' protocol (module doc) makes
// every dereference happen while the caller's borrows are alive, each unit's
// output slot written by one engine only, and the results published to the
// caller through the lane's channel (a happens-before edge).
unsafe impl Send for Loan {}

impl Loan {
    /// A loan of nothing (a lane before its first call).
    pub(super) fn none() -> Loan {
        Loan {
            units: [(std::ptr::null(), 0); MAX_BATCH_SIZE],
            n: 0,
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

    /// Unit `i`.
    ///
    /// # Safety
    /// The call that made this loan has not ended, and this engine claimed
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
    /// As [`Loan::unit`]; besides, only the engine that claimed `i` calls
    /// this for `i`, once per call, so the slot is not aliased.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn out_slot<'a>(&self, i: usize) -> &'a mut [u8] {
        assert!(i < self.n && !self.out.is_null());
        // SAFETY: slot `i` lies inside the caller's `&mut [u8]` (checked in
        // `new`), alive until the call ends; one engine writes it (the
        // claimer), and the caller reads it only after that engine's lane
        // is back.
        unsafe { std::slice::from_raw_parts_mut(self.out.add(i * PAGE_SIZE), PAGE_SIZE) }
    }
}
