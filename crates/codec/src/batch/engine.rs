//! The engines of one direction: engine 0's lane on the calling thread,
//! the worker threads with their lanes, the hand-off of lanes to workers
//! and back, and the owner map that says where each unit's result lives.
//!
//! The caller never waits for a worker that did nothing: if it claimed every
//! unit itself (the workers were slow to wake), it returns at once, and lanes
//! still out with workers are taken back without waiting at the start of a
//! later call (a worker whose lane is not home is left out of that call).
//! Otherwise it waits only until the lanes holding the units workers claimed
//! are back. Waiting is polling: the caller polls for up to 100 us, then
//! blocks (one worker still out) or yields between polls (several). A worker
//! that has handed its lane back polls for the next one for 200 us before it
//! parks, so back-to-back batches do not pay a thread wake-up each (50 to
//! 150 us for an idle vCPU on a VM) while an idle batch object sleeps: the
//! spin is bounded, so a batch object between bursts costs at most 200 us of
//! CPU per worker after each call. Lanes are boxed, so a hand-off moves a
//! pointer.
//!
//! What a lane does with a unit is the direction's business (`compress.rs`,
//! `decompress.rs`); which unit it takes is `claim.rs`'s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::claim::{opened, Ticket, Turn, EPOCH_MASK};
use super::loan::Loan;
use super::{BatchError, MAX_BATCH_SIZE};

/// How long a worker keeps polling for its next lane after it has returned
/// one, before it parks. The next batch of a back-to-back run (the zswap
/// store path, a bench loop) reaches the worker after the caller's last
/// unit and the next call's staging, up to about 100 us for a batch of 32;
/// a parked worker on an idle vCPU takes 50 to 150 us to wake on a VM, which
/// 50 us of polling did not avoid (a third of the calls at batch 8 woke a
/// parked worker). An idle batch object costs at most this much CPU per
/// worker after each call, then sleeps.
const WORKER_SPIN: Duration = Duration::from_micros(200);

/// While polling, a worker yields its CPU every this many polls, so that on
/// a loaded machine it does not hold a CPU the caller could run on.
const POLLS_PER_YIELD: u32 = 32;

/// How long the caller polls for the lanes it waits on before it blocks (one
/// worker outstanding) or yields between polls (several). It only waits for
/// units that workers claimed, so the wait is about one unit's time.
const CALLER_SPIN: Duration = Duration::from_micros(100);

/// `spin_loop` hints between two polls of a channel.
const SPINS_PER_POLL: usize = 4;

/// One engine's codec and buffers, in either direction.
pub(super) trait Lane: Send + 'static {
    fn ticket(&self) -> &Ticket;
    /// Forgets the last call's results: the lane now belongs to batch
    /// `epoch`.
    fn reset(&mut self, epoch: u64);
    /// Takes the call's loan (worker lanes): its units and output slots.
    fn lend(&mut self, loan: Loan);
    /// A worker's job: claims units of the call and does them until none
    /// is left.
    fn run_claimed(&mut self);
}

/// The worker thread's loop: takes a lane, does its units, hands it back,
/// then polls for the next lane for [`WORKER_SPIN`] before it parks. It
/// parks with `thread::park` rather than blocking in the channel: the sender
/// unparks it after each send, and parking never allocates (a std channel
/// allocates its waiter list the first time a side blocks, which here could
/// happen at any time after a call).
fn worker_loop<L: Lane>(rx: Receiver<Box<L>>, tx: SyncSender<Box<L>>) {
    let mut spin_from: Option<Instant> = None;
    let mut polls = 0u32;
    loop {
        match rx.try_recv() {
            Ok(mut lane) => {
                lane.run_claimed();
                if tx.send(lane).is_err() {
                    return;
                }
                spin_from = Some(Instant::now());
            }
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => match spin_from {
                Some(t) if t.elapsed() < WORKER_SPIN => {
                    polls = polls.wrapping_add(1);
                    if polls % POLLS_PER_YIELD == 0 {
                        std::thread::yield_now();
                    } else {
                        for _ in 0..SPINS_PER_POLL {
                            std::hint::spin_loop();
                        }
                    }
                }
                _ => {
                    spin_from = None;
                    // Returns at once if an unpark came since the last park.
                    std::thread::park();
                }
            },
        }
    }
}

/// The calling side of a persistent worker thread: the channels to and from
/// it, its join handle, and its lane (codec + buffers) while the lane is at
/// home. The lane travels to the thread for a batch and comes back with
/// results; it is boxed so that a hand-off moves a pointer, not the codec's
/// state.
struct WorkerHandle<L> {
    /// The lane while it is at home; `None` while the worker has it.
    lane: Option<Box<L>>,
    to: Option<SyncSender<Box<L>>>,
    back: Receiver<Box<L>>,
    handle: Option<JoinHandle<()>>,
}

impl<L: Lane> WorkerHandle<L> {
    fn spawn(index: usize, lane: L) -> Result<WorkerHandle<L>, BatchError> {
        let (to, rx) = sync_channel::<Box<L>>(1);
        let (tx, back) = sync_channel::<Box<L>>(1);
        let handle = std::thread::Builder::new()
            .name(format!("cannery-batch-{index}"))
            .spawn(move || worker_loop(rx, tx))
            .map_err(|e| BatchError::Spawn(e.to_string()))?;
        let mut w = WorkerHandle {
            lane: Some(Box::new(lane)),
            to: Some(to),
            back,
            handle: Some(handle),
        };
        // One round trip with an empty batch (the lane's ticket has no
        // units), so that the thread has started, and done the allocations
        // std makes when a thread starts and when a channel first blocks,
        // before `new` returns rather than at some later time.
        if !w.send() {
            return Err(BatchError::Spawn(format!(
                "batch engine {index} did not start"
            )));
        }
        match w.back.recv() {
            Ok(lane) => w.lane = Some(lane),
            Err(_) => {
                return Err(BatchError::Spawn(format!(
                    "batch engine {index} did not start"
                )))
            }
        }
        Ok(w)
    }

    /// Hands the lane to the worker thread (and wakes it if it is parked);
    /// false if the worker died.
    fn send(&mut self) -> bool {
        let sent = match (self.lane.take(), &self.to) {
            (Some(lane), Some(to)) => to.send(lane).is_ok(),
            _ => false,
        };
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
        sent
    }

    /// Takes the lane back if the worker has returned it, without waiting;
    /// false if the worker died.
    fn try_home(&mut self) -> bool {
        if self.lane.is_none() {
            match self.back.try_recv() {
                Ok(lane) => self.lane = Some(lane),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => return false,
            }
        }
        true
    }
}

impl<L> Drop for WorkerHandle<L> {
    fn drop(&mut self) {
        // Closing the channel ends the worker's loop (after the lane it may
        // still be working on); a parked worker is woken to see it.
        self.to = None;
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Batch size, the owner map of the last call, and whether an engine died.
pub(super) struct Plan {
    pub(super) batch_size: usize,
    /// Units in the last successful call.
    pub(super) len: usize,
    /// Where each unit of the last call lives: (engine, slot in its lane).
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
            return Err(BatchError::NoEngines);
        }
        // Engines beyond the batch size would never get a unit.
        let engines = codecs.min(batch_size);
        let plan = Plan {
            batch_size,
            len: 0,
            owner: [(0, 0); MAX_BATCH_SIZE],
            lost: None,
        };
        Ok((plan, engines))
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

    /// Where unit `i` of the last call lives: (engine, slot).
    #[inline]
    pub(super) fn locate(&self, i: usize) -> (usize, usize) {
        assert!(i < self.len, "unit {i} of a batch of {}", self.len);
        let (e, s) = self.owner[i];
        (e as usize, s as usize)
    }
}

/// The engines of one direction: the caller's lane, the workers, the shared
/// claim counter, and the plan.
pub(super) struct Engines<L> {
    pub(super) plan: Plan,
    /// `epoch << 16 | lo << 8 | hi`, shared with every lane.
    pub(super) claims: Arc<AtomicU64>,
    /// The epoch of the last call that gave workers a batch.
    epoch: u64,
    /// Engine 0: the calling thread's lane.
    pub(super) local: L,
    /// Worker `k` is engine `k + 1`.
    workers: Vec<WorkerHandle<L>>,
    /// Bit `k`: worker `k` was handed this call's batch and has not given
    /// the lane back yet.
    out: u32,
}

// Engines are capped by the batch size, so every worker has a bit in `out`.
const _: () = assert!(MAX_BATCH_SIZE - 1 <= u32::BITS as usize);

/// Enters the units a returned worker lane did into the owner map and hands
/// the lane to `collected`; returns how many units it did.
fn record<L: Lane>(
    plan: &mut Plan,
    epoch: u64,
    engine: usize,
    lane: &L,
    collected: &mut impl FnMut(usize, &L),
) -> usize {
    let t = lane.ticket();
    debug_assert_eq!(t.epoch, epoch, "a lane staged for another call");
    for (slot, &i) in t.done.iter().enumerate() {
        plan.owner[i as usize] = (engine as u8, slot as u8);
    }
    collected(engine, lane);
    t.done.len()
}

impl<L: Lane> Engines<L> {
    /// One engine per codec, capped by the batch size; `lane` builds a lane.
    pub(super) fn new<C>(
        batch_size: usize,
        codecs: Vec<C>,
        lane: impl Fn(C, Arc<AtomicU64>) -> L,
    ) -> Result<Engines<L>, BatchError> {
        let (plan, engines) = Plan::new(batch_size, codecs.len())?;
        let claims = Arc::new(AtomicU64::new(0));
        let mut codecs = codecs.into_iter().take(engines);
        let first = codecs.next().ok_or(BatchError::NoEngines)?;
        let local = lane(first, claims.clone());
        let mut workers = Vec::with_capacity(engines - 1);
        for (k, codec) in codecs.enumerate() {
            workers.push(WorkerHandle::spawn(k + 1, lane(codec, claims.clone()))?);
        }
        Ok(Engines {
            plan,
            claims,
            epoch: 0,
            local,
            workers,
            out: 0,
        })
    }

    pub(super) fn count(&self) -> usize {
        1 + self.workers.len()
    }

    /// Marks the batch object unusable: engine `e` died.
    fn lose(&mut self, e: usize) -> BatchError {
        self.plan.lost = Some(e);
        BatchError::EngineLost(e)
    }

    /// Takes back, without waiting, lanes that workers have returned since
    /// they were last used; fails if a worker died.
    pub(super) fn reclaim(&mut self) -> Result<(), BatchError> {
        if let Some(e) = self.plan.lost {
            return Err(BatchError::EngineLost(e));
        }
        for k in 0..self.workers.len() {
            if !self.workers[k].try_home() {
                return Err(self.lose(k + 1));
            }
        }
        Ok(())
    }

    /// One call: hands the loan to the workers at home, lets the caller
    /// claim units from the bottom and do each with `mine` (its lane and
    /// the unit's index), then waits for the lanes holding the units
    /// workers claimed, passing each to `collected` with its engine number.
    ///
    /// The loan's soundness rests here: whether the call returns, fails or
    /// unwinds from a panic in `mine`, no lane that may hold a claimed unit
    /// is still away when this returns ([`Engines::drain`]).
    pub(super) fn call(
        &mut self,
        n: usize,
        loan: Loan,
        mut mine: impl FnMut(&mut L, usize),
        collected: impl FnMut(usize, &L),
    ) -> Result<(), BatchError> {
        let mut turn = self.begin(n, loan)?;
        let claims = &self.claims;
        let local = &mut self.local;
        let caller = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            while let Some(i) = turn.next(claims) {
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
    /// first) gets the loan. On a failed hand-off the lanes already handed
    /// out are waited for before the error returns.
    fn begin(&mut self, n: usize, loan: Loan) -> Result<Turn, BatchError> {
        self.plan.len = 0;
        self.out = 0;
        let shared = n > 1 && self.workers.iter().any(|w| w.lane.is_some());
        if shared {
            self.epoch = (self.epoch + 1) & EPOCH_MASK;
            self.claims.store(opened(self.epoch, n), Ordering::Release);
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
        for k in 0..self.workers.len() {
            if helpers == n - 1 {
                break;
            }
            let w = &mut self.workers[k];
            let Some(lane) = w.lane.as_mut() else {
                continue;
            };
            lane.reset(self.epoch);
            lane.lend(loan);
            if !w.send() {
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
    /// engine number. If the caller did every unit, nothing is waited for.
    /// If a worker died, the other lanes still away are waited for before
    /// the error returns.
    fn finish(
        &mut self,
        turn: Turn,
        mut collected: impl FnMut(usize, &L),
    ) -> Result<(), BatchError> {
        let Engines {
            plan,
            local,
            workers,
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
            for (k, w) in workers.iter_mut().enumerate() {
                if *out & (1 << k) == 0 {
                    continue;
                }
                match w.back.try_recv() {
                    Ok(lane) => {
                        missing -= record(plan, turn.epoch, k + 1, &*lane, &mut collected);
                        w.lane = Some(lane);
                        *out &= !(1 << k);
                    }
                    Err(TryRecvError::Empty) => {}
                    Err(TryRecvError::Disconnected) => {
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
                for _ in 0..SPINS_PER_POLL {
                    std::hint::spin_loop();
                }
            } else if out.count_ones() == 1 {
                // The one worker still out holds every missing unit: block.
                let k = out.trailing_zeros() as usize;
                *out = 0;
                match workers[k].back.recv() {
                    Ok(lane) => {
                        missing -= record(plan, turn.epoch, k + 1, &*lane, &mut collected);
                        workers[k].lane = Some(lane);
                    }
                    Err(_) => {
                        lost = Some(k + 1);
                        break 'wait;
                    }
                }
            } else {
                std::thread::yield_now();
            }
        }
        if let Some(e) = lost {
            let e = self.lose(e);
            self.drain();
            return Err(e);
        }
        debug_assert_eq!(missing, 0);
        self.plan.len = n;
        Ok(())
    }

    /// Closes the claim counter and waits for every lane handed out in this
    /// call (a dead worker's channel reports it at once): afterwards no
    /// lane can touch the call's loan. For the error and panic paths only;
    /// results are not recorded.
    fn drain(&mut self) {
        self.claims.store(opened(self.epoch, 0), Ordering::Release);
        for k in 0..self.workers.len() {
            if self.out & (1 << k) != 0 {
                if let Ok(lane) = self.workers[k].back.recv() {
                    self.workers[k].lane = Some(lane);
                }
            }
        }
        self.out = 0;
    }

    pub(super) fn lane(&self, engine: usize) -> &L {
        if engine == 0 {
            &self.local
        } else {
            self.workers[engine - 1]
                .lane
                .as_ref()
                .expect("lanes that did units of the last call are home")
        }
    }
}
