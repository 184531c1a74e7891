//! The workers of one direction: worker 0's lane on the calling thread,
//! the worker threads (`seat.rs`), and the owner map that says where each unit's
//! result lives.
//!
//! The caller never waits for a worker that did nothing: if it claimed every
//! unit itself (the workers were slow to start), it returns at once, and
//! lanes still out with workers are taken back without waiting at the start
//! of a later call (a worker whose lane is not home is left out of that
//! call). Otherwise it waits only until the lanes holding the units workers
//! claimed are back. Waiting is polling: the caller polls for up to 100 us,
//! then yields between polls.
//!
//! What a lane does with a unit is the direction's business (`compress.rs`,
//! `decompress.rs`); which unit it takes is `claim.rs`'s; how a lane gets
//! to its worker and back is `seat.rs`'s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::claim::{Board, Turn, EPOCH_MASK};
use super::loan::Loan;
use super::seat::{Lane, Presence, WorkerThread};
use super::{BatchError, MAX_BATCH_SIZE};

/// How long the caller polls for the lanes it waits on before it yields
/// between polls. It only waits for units that workers claimed, so the wait
/// is about one unit's time.
const CALLER_SPIN: Duration = Duration::from_micros(100);

/// Batch size, the owner map of the last call, and whether a worker died.
pub(super) struct Plan {
    pub(super) batch_size: usize,
    /// Units in the last successful call.
    pub(super) len: usize,
    /// Where each unit of the last call lives: (worker, slot in its lane).
    pub(super) owner: [(u8, u8); MAX_BATCH_SIZE],
    /// Set once a worker has died.
    lost: Option<usize>,
}

impl Plan {
    fn new(batch_size: usize, codecs: usize) -> Result<(Plan, usize), BatchError> {
        if !(1..=MAX_BATCH_SIZE).contains(&batch_size) {
            return Err(BatchError::BatchSize(batch_size));
        }
        if codecs == 0 {
            return Err(BatchError::NoWorkers);
        }
        // Workers beyond the batch size would never get a unit.
        let workers = codecs.min(batch_size);
        let plan = Plan {
            batch_size,
            len: 0,
            owner: [(0, 0); MAX_BATCH_SIZE],
            lost: None,
        };
        Ok((plan, workers))
    }

    /// Gathers the units of a call on the stack, checking the count.
    pub(super) fn gather<'a, I>(
        &self,
        units: I,
    ) -> Result<([&'a [u8]; MAX_BATCH_SIZE], usize), BatchError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut arr: [&[u8]; MAX_BATCH_SIZE] = [&[]; MAX_BATCH_SIZE];
        let mut n = 0;
        let mut it = units.into_iter();
        for u in it.by_ref() {
            if n == self.batch_size {
                return Err(BatchError::TooManyUnits {
                    given: n + 1 + it.count(),
                    batch_size: self.batch_size,
                });
            }
            arr[n] = u;
            n += 1;
        }
        Ok((arr, n))
    }

    /// Where unit `i` of the last call lives: (worker, slot).
    #[inline]
    pub(super) fn locate(&self, i: usize) -> (usize, usize) {
        assert!(i < self.len, "unit {i} of a batch of {}", self.len);
        let (w, s) = self.owner[i];
        (w as usize, s as usize)
    }
}

/// The workers of one direction: the caller's lane, the worker threads, the shared
/// claim counter, and the plan.
pub(super) struct Workers<L> {
    pub(super) plan: Plan,
    /// The claim counter and the call's loan, shared with every lane.
    board: Arc<Board>,
    /// The epoch of the last call that gave workers a batch.
    epoch: u64,
    /// Worker 0: the calling thread's lane.
    pub(super) local: L,
    /// Thread `k` is worker `k + 1`.
    threads: Vec<WorkerThread<L>>,
    /// Bit `k`: thread `k` was handed this call's batch and has not given
    /// the lane back yet.
    out: u32,
}

// Workers are capped by the batch size, so every worker has a bit in `out`.
const _: () = assert!(MAX_BATCH_SIZE - 1 <= u32::BITS as usize);

/// Enters the units a returned worker lane did into the owner map and hands
/// the lane to `collected`; returns how many units it did.
fn record<L: Lane>(
    plan: &mut Plan,
    epoch: u64,
    worker: usize,
    lane: &L,
    collected: &mut impl FnMut(usize, &L),
) -> usize {
    let t = lane.ticket();
    debug_assert_eq!(t.epoch, epoch, "a lane staged for another call");
    for (slot, &i) in t.done.iter().enumerate() {
        plan.owner[i as usize] = (worker as u8, slot as u8);
    }
    collected(worker, lane);
    t.done.len()
}

impl<L: Lane> Workers<L> {
    /// One worker per codec, capped by the batch size; `lane` builds a lane.
    pub(super) fn new<C>(
        batch_size: usize,
        codecs: Vec<C>,
        lane: impl Fn(C, Arc<Board>) -> L,
    ) -> Result<Workers<L>, BatchError> {
        let (plan, count) = Plan::new(batch_size, codecs.len())?;
        let board = Arc::new(Board::new());
        let mut codecs = codecs.into_iter().take(count);
        let first = codecs.next().ok_or(BatchError::NoWorkers)?;
        let local = lane(first, board.clone());
        let mut threads = Vec::with_capacity(count - 1);
        for (k, codec) in codecs.enumerate() {
            threads.push(
                WorkerThread::spawn(k + 1, lane(codec, board.clone()))
                    .map_err(BatchError::Spawn)?,
            );
        }
        Ok(Workers {
            plan,
            board,
            epoch: 0,
            local,
            threads,
            out: 0,
        })
    }

    pub(super) fn count(&self) -> usize {
        1 + self.threads.len()
    }

    /// Marks the batch object unusable: worker `w` died.
    fn lose(&mut self, w: usize) -> BatchError {
        self.plan.lost = Some(w);
        BatchError::WorkerLost(w)
    }

    /// Takes back, without waiting, lanes that workers have returned since
    /// they were last used; fails if a worker died.
    pub(super) fn reclaim(&mut self) -> Result<(), BatchError> {
        if let Some(w) = self.plan.lost {
            return Err(BatchError::WorkerLost(w));
        }
        for k in 0..self.threads.len() {
            if self.threads[k].poll() == Presence::Dead {
                return Err(self.lose(k + 1));
            }
        }
        Ok(())
    }

    /// One call: hands the loan to the workers at home, lets the caller
    /// claim units from the bottom and do each with `mine` (its lane and
    /// the unit's index), then waits for the lanes holding the units
    /// workers claimed, passing each to `collected` with its worker number.
    ///
    /// The loan's soundness rests here: whether the call returns, fails or
    /// unwinds from a panic in `mine`, no lane that may hold a claimed unit
    /// is still away when this returns ([`Workers::drain`]).
    pub(super) fn call(
        &mut self,
        n: usize,
        loan: &Loan,
        mut mine: impl FnMut(&mut L, usize),
        collected: impl FnMut(usize, &L),
    ) -> Result<(), BatchError> {
        let mut turn = self.begin(n, loan)?;
        let board = &self.board;
        let local = &mut self.local;
        let caller = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            while let Some(i) = turn.next(board) {
                mine(local, i);
            }
        }));
        if let Err(panic) = caller {
            self.drain();
            std::panic::resume_unwind(panic);
        }
        self.finish(turn, collected)
    }

    /// Starts a call of `n` units: a single unit, or no worker at home,
    /// stays with the caller; otherwise a new epoch opens the claim counter
    /// and every worker at home (at most one per unit beyond the caller's
    /// first) is lent its lane for the epoch. If a worker turns out dead,
    /// the lanes already lent are waited for before the error returns.
    fn begin(&mut self, n: usize, loan: &Loan) -> Result<Turn, BatchError> {
        self.plan.len = 0;
        self.out = 0;
        let shared = n > 1 && self.threads.iter().any(|w| w.lane().is_some());
        if shared {
            self.epoch = (self.epoch + 1) & EPOCH_MASK;
            self.board.open(self.epoch, n, loan);
        }
        self.local.reset(self.epoch);
        let turn = Turn {
            shared,
            epoch: self.epoch,
            n,
            next: 0,
        };
        if !shared {
            return Ok(turn);
        }
        let mut helpers = 0;
        for k in 0..self.threads.len() {
            if helpers == n - 1 {
                break;
            }
            let w = &mut self.threads[k];
            if w.lane().is_none() {
                continue;
            }
            if !w.lend(self.epoch) {
                let e = self.lose(k + 1);
                self.drain();
                return Err(e);
            }
            self.out |= 1 << k;
            helpers += 1;
        }
        Ok(turn)
    }

    /// Ends a call once the caller can claim no more units: records the
    /// caller's units, then waits for the lanes holding the units workers
    /// claimed (and only those), passing each to `collected` with its
    /// worker number. If the caller did every unit, nothing is waited for.
    /// If a worker died, the other lanes still away are waited for before
    /// the error returns.
    fn finish(
        &mut self,
        turn: Turn,
        mut collected: impl FnMut(usize, &L),
    ) -> Result<(), BatchError> {
        let Workers {
            plan,
            local,
            threads,
            out,
            ..
        } = self;
        let n = turn.n;
        let mine = &local.ticket().done;
        for (slot, &i) in mine.iter().enumerate() {
            plan.owner[i as usize] = (0, slot as u8);
        }
        let mut missing = n - mine.len();
        let mut lost = None;
        let mut start = None;
        'wait: while missing > 0 {
            for (k, w) in threads.iter_mut().enumerate() {
                if *out & (1 << k) == 0 {
                    continue;
                }
                match w.poll() {
                    Presence::Home => {
                        let lane = w.lane().expect("a lane seen home");
                        missing -= record(plan, turn.epoch, k + 1, lane, &mut collected);
                        *out &= !(1 << k);
                    }
                    Presence::Out => {}
                    Presence::Dead => {
                        *out &= !(1 << k);
                        lost = Some(k + 1);
                        break 'wait;
                    }
                }
            }
            if missing == 0 {
                break;
            }
            assert!(*out != 0, "batch: {missing} claimed units are in no lane");
            let waited = start.get_or_insert_with(Instant::now).elapsed();
            if waited < CALLER_SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if let Some(w) = lost {
            let e = self.lose(w);
            self.drain();
            return Err(e);
        }
        debug_assert_eq!(missing, 0);
        self.plan.len = n;
        Ok(())
    }

    /// Closes the claim counter and waits for every lane handed out in this
    /// call (a dead worker's seat says so at once): afterwards no
    /// lane can touch the call's loan. For the error and panic paths only;
    /// results are not recorded.
    fn drain(&mut self) {
        self.board.close(self.epoch);
        for k in 0..self.threads.len() {
            if self.out & (1 << k) != 0 {
                while self.threads[k].poll() == Presence::Out {
                    std::thread::yield_now();
                }
            }
        }
        self.out = 0;
    }

    pub(super) fn lane(&self, worker: usize) -> &L {
        if worker == 0 {
            &self.local
        } else {
            self.threads[worker - 1]
                .lane()
                .expect("lanes that did units of the last call are home")
        }
    }
}
