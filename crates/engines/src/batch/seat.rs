//! One worker thread and the hand-off of its lane: a state word per worker
//! says who holds the lane, the caller or the worker. Lending the lane for a
//! call is one compare-exchange on that word, which the polling worker sees;
//! handing it back is one store, which the waiting caller polls. The lane
//! itself never moves: it lives in the seat the two threads share, and the
//! state word decides who may touch it (this file's `unsafe`).
//!
//! A worker that has handed its lane back polls for the next one for 200 us
//! before it parks, so back-to-back batches do not pay a thread wake-up each
//! (50 to 150 us for an idle vCPU on a VM), while an idle batch object
//! sleeps: the spin is bounded, so a batch object between bursts costs at
//! most 200 us of CPU per worker after each call. A parked worker is woken
//! only by the lend that finds it asleep, so lending to a polling worker is
//! the compare-exchange alone.
//!
//! If the lane's job panics, the worker marks its seat dead as it unwinds;
//! the caller sees that instead of the lane coming home, and never touches
//! that lane again.
//!
//! Not here: what a lane does with a unit (`compress.rs`, `decompress.rs`),
//! which units it takes (`claim.rs`), when the caller waits for which
//! worker (`worker.rs`).

#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::claim::{Ticket, EPOCH_MASK};

/// One worker's codec and buffers, in either direction.
pub(super) trait Lane: Send + 'static {
    fn ticket(&self) -> &Ticket;
    /// Forgets the last call's results: the lane now belongs to batch
    /// `epoch`.
    fn reset(&mut self, epoch: u64);
    /// A worker's job: claims units of the call and does them until none
    /// is left.
    fn run_claimed(&mut self);
}

// The state word: one of these in its low bits; when LENT, the epoch of the
// call above them.
const TAG_BITS: u32 = 3;
const TAG: u64 = (1 << TAG_BITS) - 1;
const _: () = assert!(EPOCH_MASK << TAG_BITS >> TAG_BITS == EPOCH_MASK);

/// The caller holds the lane; the worker polls for it.
const HOME: u64 = 0;
/// The caller holds the lane; the worker is parked, or about to park: a
/// lend must unpark it.
const SLEEPING: u64 = 1;
/// The worker holds the lane.
const LENT: u64 = 2;
/// The caller is dropping the worker: its loop ends.
const STOP: u64 = 3;
/// The lane's job panicked: the thread has ended, the lane is abandoned.
const DEAD: u64 = 4;

/// How long a worker keeps polling for its next lane after it has returned
/// one, before it parks. The next batch of a back-to-back run (the zswap
/// store path, a bench loop) reaches the worker after the caller's last
/// unit and the next call's staging, up to about 100 us for a batch of 32;
/// a parked worker on an idle vCPU takes 50 to 150 us to wake on a VM, which
/// 50 us of polling did not avoid (a third of the calls at batch 8 woke a
/// parked worker).
const WORKER_SPIN: Duration = Duration::from_micros(200);

/// While polling, a worker yields its CPU every this many polls, so that on
/// a loaded machine it does not hold a CPU the caller could run on.
const POLLS_PER_YIELD: u32 = 64;

/// The lane and the word that says who holds it.
struct Seat<L> {
    state: AtomicU64,
    lane: UnsafeCell<L>,
}

// SAFETY: the lane is touched by one thread at a time, as the state word
// says: the caller while it is HOME or SLEEPING, the worker while it is
// LENT; each hand-over is a release store (or compare-exchange) read by an
// acquire load, so every access of one side happens before every access of
// the other.
unsafe impl<L: Send> Sync for Seat<L> {}

/// Where a worker's lane is, as the caller last saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Presence {
    /// With the caller.
    Home,
    /// With the worker.
    Out,
    /// The worker died (its job panicked).
    Dead,
}

/// The calling side of a persistent worker thread: its seat, whether the
/// lane is home as far as the caller knows, and the join handle.
pub(super) struct WorkerThread<L> {
    seat: Arc<Seat<L>>,
    /// The caller has seen the lane home (an acquire load of HOME or
    /// SLEEPING) and has not lent it since.
    home: bool,
    handle: Option<JoinHandle<()>>,
}

impl<L: Lane> WorkerThread<L> {
    /// Starts worker `index` with `lane`, and waits for one round trip with
    /// an empty call (the lane's ticket has no units), so that the thread
    /// has started, and made the allocations std makes when a thread
    /// starts, before this returns rather than at some later time.
    pub(super) fn spawn(index: usize, lane: L) -> Result<WorkerThread<L>, String> {
        let seat = Arc::new(Seat {
            // Epoch 0: the claim counter's first value, with no units.
            state: AtomicU64::new(LENT),
            lane: UnsafeCell::new(lane),
        });
        let theirs = seat.clone();
        let handle = std::thread::Builder::new()
            .name(format!("cannery-batch-{index}"))
            .spawn(move || serve(&theirs))
            .map_err(|e| e.to_string())?;
        let mut w = WorkerThread {
            seat,
            home: false,
            handle: Some(handle),
        };
        loop {
            match w.poll() {
                Presence::Home => return Ok(w),
                Presence::Dead => return Err(format!("batch worker {index} did not start")),
                Presence::Out => std::thread::yield_now(),
            }
        }
    }

    /// Where the lane is: looks only if it was not home.
    #[inline]
    pub(super) fn poll(&mut self) -> Presence {
        if self.home {
            return Presence::Home;
        }
        match self.seat.state.load(Ordering::Acquire) & TAG {
            HOME | SLEEPING => {
                self.home = true;
                Presence::Home
            }
            LENT => Presence::Out,
            _ => Presence::Dead,
        }
    }

    /// The lane, if it is home.
    #[inline]
    pub(super) fn lane(&self) -> Option<&L> {
        // SAFETY: `home` means the caller saw HOME or SLEEPING with an
        // acquire load after the worker's last use of the lane, and has not
        // lent it since; the worker touches it only after the next `lend`,
        // which takes `&mut self`, so no borrow given out here is alive then.
        self.home.then(|| unsafe { &*self.seat.lane.get() })
    }

    /// Lends the lane (which must be home) to the worker for call `epoch`,
    /// waking the worker if it sleeps; the worker resets the lane itself.
    /// False if the worker has died (then the lane stays where it is,
    /// unused).
    #[inline]
    #[must_use]
    pub(super) fn lend(&mut self, epoch: u64) -> bool {
        assert!(self.home, "lending a lane that is not home");
        self.home = false;
        let lent = (epoch & EPOCH_MASK) << TAG_BITS | LENT;
        let state = &self.seat.state;
        // Release: the caller's last reads of the lane (the last call's
        // results) happen before the worker's acquire load of LENT. A
        // polling worker (HOME) is the common case, so that is tried first.
        let mut seen = HOME;
        loop {
            match state.compare_exchange(seen, lent, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now @ (HOME | SLEEPING)) => seen = now,
                Err(_) => return false, // DEAD: the thread is gone.
            }
        }
        if seen == SLEEPING {
            if let Some(h) = &self.handle {
                h.thread().unpark();
            }
        }
        true
    }
}

impl<L> Drop for WorkerThread<L> {
    fn drop(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        // A lane still out (a call that claimed everything itself leaves a
        // worker's lane out; it claims nothing and comes back) is waited
        // for, so that STOP is not overwritten by its return.
        loop {
            match self.seat.state.load(Ordering::Acquire) & TAG {
                LENT => std::thread::yield_now(),
                DEAD => break,
                _ => {
                    if self.seat.state.swap(STOP, Ordering::AcqRel) == SLEEPING {
                        handle.thread().unpark();
                    }
                    break;
                }
            }
        }
        let _ = handle.join();
    }
}

/// Marks the seat dead if the worker unwinds from a panic of its job.
struct DeadOnPanic<'a>(&'a AtomicU64);

impl Drop for DeadOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(DEAD, Ordering::Release);
        }
    }
}

/// The worker thread's loop: waits for the lane to be lent, does its job,
/// hands it back, then polls for the next lend for [`WORKER_SPIN`] before it
/// parks. It parks with `thread::park`, which never allocates.
fn serve<L: Lane>(seat: &Seat<L>) {
    let _dead = DeadOnPanic(&seat.state);
    let mut spin_from: Option<Instant> = None;
    let mut polls = 0u32;
    loop {
        let state = seat.state.load(Ordering::Acquire);
        match state & TAG {
            LENT => {
                // SAFETY: LENT (acquire): the caller's last access to the
                // lane happened before its lend, and it touches the lane
                // again only after it sees the HOME stored (release) below,
                // after this borrow's last use.
                let lane = unsafe { &mut *seat.lane.get() };
                lane.reset(state >> TAG_BITS);
                lane.run_claimed();
                seat.state.store(HOME, Ordering::Release);
                spin_from = Some(Instant::now());
            }
            HOME => match spin_from {
                Some(t) if t.elapsed() < WORKER_SPIN => {
                    polls = polls.wrapping_add(1);
                    if polls % POLLS_PER_YIELD == 0 {
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
                _ => {
                    // If a lend came in between, this exchange fails (the
                    // word is LENT) and the next round takes the lane; if it
                    // comes after, it finds SLEEPING and unparks (an unpark
                    // before the park makes the park return at once).
                    spin_from = None;
                    let _ = seat.state.compare_exchange(
                        HOME,
                        SLEEPING,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    );
                }
            },
            SLEEPING => std::thread::park(),
            _ => return, // STOP
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::batch::claim::{Board, Ticket};

    /// A lane that counts its jobs, remembers the epoch it was reset to,
    /// and panics or dawdles in the calls it is told to.
    struct Probe {
        ticket: Ticket,
        jobs: Arc<AtomicUsize>,
        epoch: Arc<AtomicU64>,
        panic_at: u64,
        slow_at: u64,
    }

    impl Lane for Probe {
        fn ticket(&self) -> &Ticket {
            &self.ticket
        }
        fn reset(&mut self, epoch: u64) {
            self.ticket.reset(epoch);
            self.epoch.store(epoch, Ordering::Relaxed);
        }
        fn run_claimed(&mut self) {
            let e = self.ticket.epoch;
            assert!(e != self.panic_at, "the probe's job panics");
            if e == self.slow_at {
                std::thread::sleep(Duration::from_millis(5));
            }
            self.jobs.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn probe(
        panic_at: u64,
        slow_at: u64,
    ) -> (WorkerThread<Probe>, Arc<AtomicUsize>, Arc<AtomicU64>) {
        let jobs = Arc::new(AtomicUsize::new(0));
        let epoch = Arc::new(AtomicU64::new(u64::MAX));
        let lane = Probe {
            ticket: Ticket::new(Arc::new(Board::new()), 1),
            jobs: jobs.clone(),
            epoch: epoch.clone(),
            panic_at,
            slow_at,
        };
        (WorkerThread::spawn(1, lane).unwrap(), jobs, epoch)
    }

    fn wait_for(w: &mut WorkerThread<Probe>, want: Presence) {
        let start = Instant::now();
        while w.poll() != want {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "lane never {want:?}"
            );
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_lend_reaches_a_polling_and_a_sleeping_worker() {
        let (mut w, jobs, epoch) = probe(u64::MAX, u64::MAX);
        // Started: one round trip with epoch 0.
        assert_eq!(jobs.load(Ordering::Relaxed), 1);
        assert_eq!(epoch.load(Ordering::Relaxed), 0);
        // At once: the worker is still polling.
        assert!(w.lend(5));
        wait_for(&mut w, Presence::Home);
        assert_eq!(jobs.load(Ordering::Relaxed), 2);
        assert_eq!(
            epoch.load(Ordering::Relaxed),
            5,
            "the worker resets its lane"
        );
        // After the spin: the worker has gone to sleep, and the lend wakes it.
        let start = Instant::now();
        while w.seat.state.load(Ordering::Acquire) & TAG != SLEEPING {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "worker never slept"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(w.lend(EPOCH_MASK));
        wait_for(&mut w, Presence::Home);
        assert_eq!(jobs.load(Ordering::Relaxed), 3);
        assert_eq!(
            epoch.load(Ordering::Relaxed),
            EPOCH_MASK,
            "the whole epoch travels"
        );
    }

    #[test]
    fn a_panicking_job_marks_the_seat_dead_and_drop_still_joins() {
        let (mut w, jobs, _) = probe(2, u64::MAX);
        assert!(w.lend(1));
        wait_for(&mut w, Presence::Home);
        assert!(w.lend(2));
        wait_for(&mut w, Presence::Dead);
        assert!(
            w.lane().is_none(),
            "a dead worker's lane is never handed out"
        );
        assert_eq!(jobs.load(Ordering::Relaxed), 2);
        drop(w);
    }

    #[test]
    fn dropping_a_worker_whose_lane_is_out_waits_for_it() {
        let (mut w, jobs, _) = probe(u64::MAX, 3);
        assert!(w.lend(3));
        assert_eq!(w.poll(), Presence::Out);
        drop(w);
        assert_eq!(jobs.load(Ordering::Relaxed), 2, "the job ran to its end");
    }
}
