//! Batch compression and decompression of 4 KiB units: the user-space
//! counterpart of the kernel's IAA batching (iaa_crypto's `batch_size` of 8,
//! zswap compressing a large folio as 4 KiB units, swap-in decompressing up
//! to 32 pages at once).
//!
//! A [`BatchCompressor`] takes up to `batch_size` units (1..=32) in one call
//! and spreads them over `engines`. Engine 0 is the calling thread; engines
//! 1.. are persistent worker threads started once, each owning its own codec
//! and its own buffers. Every unit gets its own [`UnitStatus`]: a compressed
//! length, [`UnitStatus::Incompressible`] (the output would be 4096 bytes or
//! more, so zswap stores the page raw), or the codec's typed error. One
//! unit's failure never changes another unit's result. [`BatchDecompressor`]
//! does the same for compressed streams, decoding stream `i` into the `i`-th
//! 4 KiB slot of the caller's buffer.
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
//! Batch size 1 is the plain single-page call: a call with one unit (or with
//! no worker at home) stays with engine 0, the calling thread, which calls
//! [`PageCompressor::compress_page`] directly on the caller's slice, with no
//! copy, no claim counter and no thread hand-off.
//!
//! If a worker's codec panics, the worker thread dies and the call (or the
//! next one) returns [`BatchError::EngineLost`]; from then on the batch
//! object only returns that error. If engine 0's codec panics, the panic
//! reaches the caller.
//!
//! No allocation per unit in steady state: every buffer (staging, outputs,
//! statuses, the channel slots of `sync_channel(1)`) is allocated in `new`
//! with room for a full batch and reused; the units of a call are gathered in
//! an array on the stack. Only a codec that allocates on its own (dynamic
//! mode builds a table per page; some peer libraries return fresh vectors),
//! an error value, or an oversized (invalid) unit allocates. The one-time
//! allocations of a new thread and of a std channel's first blocking wait
//! happen in `new`, which waits for each worker to start (workers park
//! rather than block in a channel afterwards).
//! The `cannery-benches` package checks this with a counting global
//! allocator (`tests/no_alloc.rs`).
//!
//! Not here: policy (what to do with incompressible pages, pools, same-filled
//! pages: see `cannery_zswap::replay`), hardware queues (a QPL backend would
//! submit all units and poll, behind the same two traits), and timing.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::constants::PAGE_SIZE;
use crate::decode::{DecodeError, Decoder};
use crate::encode::{EncodeError, Encoder, Outcome};

/// Largest batch: the swap-in readahead batch the kernel series decompresses.
pub const MAX_BATCH_SIZE: usize = 32;

/// The batch size of iaa_crypto (`IAA_CRYPTO_MAX_BATCH_SIZE`) and zswap
/// (`ZSWAP_MAX_BATCH_SIZE`) in the kernel series.
pub const IAA_BATCH_SIZE: usize = 8;

/// Compresses one unit (at most 4096 bytes) into a reused buffer.
///
/// Implemented for [`Encoder`]; other compressors (zstd, lz4) implement it
/// in their own crates so that they run through the same batch path.
pub trait PageCompressor: Send + 'static {
    /// Why a unit could not be compressed.
    type Error: fmt::Debug + fmt::Display + Send + 'static;

    /// Compresses `unit` into `out` (cleared first). On
    /// [`Outcome::Incompressible`] the contents of `out` are unspecified.
    fn compress_page(&mut self, unit: &[u8], out: &mut Vec<u8>) -> Result<Outcome, Self::Error>;
}

/// Decompresses one stream into a caller's buffer whose length is the limit.
///
/// Implemented for [`Decoder`].
pub trait PageDecompressor: Send + 'static {
    /// Why a stream could not be decompressed.
    type Error: fmt::Debug + fmt::Display + Send + 'static;

    /// Decodes `data` into `out`; returns the number of bytes produced.
    fn decompress_page(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, Self::Error>;
}

impl PageCompressor for Encoder {
    type Error = EncodeError;

    #[inline]
    fn compress_page(&mut self, unit: &[u8], out: &mut Vec<u8>) -> Result<Outcome, EncodeError> {
        self.compress(unit, out)
    }
}

impl PageDecompressor for Decoder {
    type Error = DecodeError;

    #[inline]
    fn decompress_page(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
        self.decompress(data, out)
    }
}

/// What became of one unit of a compression batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitStatus<E> {
    /// Compressed to this many bytes (below 4096).
    Compressed(usize),
    /// The output would be 4096 bytes or more: store the unit raw (the
    /// kernel reports `-ENOSPC`/`-E2BIG` here).
    Incompressible,
    /// The codec failed on this unit (other units are unaffected).
    Failed(E),
}

impl<E> UnitStatus<E> {
    /// The status of a single-page call's result.
    #[inline]
    pub fn from_result(r: Result<Outcome, E>) -> UnitStatus<E> {
        match r {
            Ok(Outcome::Compressed(n)) => UnitStatus::Compressed(n),
            Ok(Outcome::Incompressible) => UnitStatus::Incompressible,
            Err(e) => UnitStatus::Failed(e),
        }
    }
}

/// Why a whole batch call (rather than one unit) failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The batch size is not in 1..=32.
    #[error("batch size {0} is out of range: it must be between 1 and 32")]
    BatchSize(usize),
    /// No codec was given, so there is no engine.
    #[error("a batch needs at least one engine (no codec was given)")]
    NoEngines,
    /// A call gave more units than the batch size.
    #[error("{given} units were given but the batch size is {batch_size}")]
    TooManyUnits {
        /// Units in the call.
        given: usize,
        /// The configured batch size.
        batch_size: usize,
    },
    /// The decompression output buffer has fewer 4 KiB slots than streams.
    #[error("output buffer of {bytes} bytes has no room for {units} pages of 4096 bytes")]
    OutputTooSmall {
        /// Streams in the call.
        units: usize,
        /// Length of the output buffer.
        bytes: usize,
    },
    /// A worker thread could not be started.
    #[error("could not start batch engine thread: {0}")]
    Spawn(String),
    /// A worker thread died (its codec panicked); the batch object is unusable.
    #[error("batch engine {0} stopped (its codec panicked); create a new batch object")]
    EngineLost(usize),
}

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

/// The claim counter holds `epoch << 16 | lo << 8 | hi`: units `lo..hi` of
/// the batch of that epoch are unclaimed (a batch has at most 32 units).
/// The caller claims from the bottom (`lo`), workers from the top (`hi`).
const EPOCH_SHIFT: u32 = 16;
const EPOCH_MASK: u64 = u64::MAX >> EPOCH_SHIFT;

/// The counter value that opens batch `epoch` of `n` units.
#[inline]
fn opened(epoch: u64, n: usize) -> u64 {
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
struct Ticket {
    claims: Arc<AtomicU64>,
    /// The batch this lane was staged for.
    epoch: u64,
    /// The first unit staged in this lane (a worker holds units `base..n`).
    base: usize,
    /// The unit index of each slot this lane filled, in slot order.
    done: Vec<u8>,
}

impl Ticket {
    fn new(claims: Arc<AtomicU64>, slots: usize) -> Ticket {
        Ticket {
            claims,
            epoch: 0,
            base: 0,
            done: Vec::with_capacity(slots),
        }
    }

    fn reset(&mut self, epoch: u64, base: usize) {
        self.epoch = epoch;
        self.base = base;
        self.done.clear();
    }

    /// A worker's claim: the highest unclaimed unit it holds.
    #[inline]
    fn claim(&self) -> Option<usize> {
        claim(&self.claims, self.epoch, false, self.base)
    }
}

/// One engine's codec and buffers, in either direction.
trait Lane: Send + 'static {
    fn ticket(&self) -> &Ticket;
    /// Forgets the last call's results: the lane now belongs to batch
    /// `epoch`, holding its units from `base` on.
    fn reset(&mut self, epoch: u64, base: usize);
    /// Copies units `base..` of the batch in (worker lanes): `units` is
    /// that tail.
    fn stage(&mut self, units: &[&[u8]]);
    /// A worker's job: claims staged units and does them until none is left.
    fn run_staged(&mut self);
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
                lane.run_staged();
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

/// A persistent worker thread and the lane (codec + buffers) it works on.
/// The lane travels to the thread for a batch and comes back with results;
/// it is boxed so that a hand-off moves a pointer, not the codec's state.
struct Worker<L> {
    /// The lane while it is at home; `None` while the worker has it.
    lane: Option<Box<L>>,
    to: Option<SyncSender<Box<L>>>,
    back: Receiver<Box<L>>,
    handle: Option<JoinHandle<()>>,
}

impl<L: Lane> Worker<L> {
    fn spawn(index: usize, lane: L) -> Result<Worker<L>, BatchError> {
        let (to, rx) = sync_channel::<Box<L>>(1);
        let (tx, back) = sync_channel::<Box<L>>(1);
        let handle = std::thread::Builder::new()
            .name(format!("cannery-batch-{index}"))
            .spawn(move || worker_loop(rx, tx))
            .map_err(|e| BatchError::Spawn(e.to_string()))?;
        let mut w = Worker {
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

impl<L> Drop for Worker<L> {
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
struct Plan {
    batch_size: usize,
    /// Units in the last successful call.
    len: usize,
    /// Where each unit of the last call lives: (engine, slot in its lane).
    owner: [(u8, u8); MAX_BATCH_SIZE],
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
    fn gather<'a, I>(&self, units: I) -> Result<([&'a [u8]; MAX_BATCH_SIZE], usize), BatchError>
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
    fn locate(&self, i: usize) -> (usize, usize) {
        assert!(i < self.len, "unit {i} of a batch of {}", self.len);
        let (e, s) = self.owner[i];
        (e as usize, s as usize)
    }
}

/// How the caller takes the units of one call: from the bottom of the shared
/// counter when workers were given the batch, else simply in order.
struct Turn {
    shared: bool,
    epoch: u64,
    n: usize,
    next: usize,
}

impl Turn {
    #[inline]
    fn next(&mut self, claims: &AtomicU64) -> Option<usize> {
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

/// The engines of one direction: the caller's lane, the workers, the shared
/// claim counter, and the plan.
struct Pool<L> {
    plan: Plan,
    /// `epoch << 16 | lo << 8 | hi`, shared with every lane.
    claims: Arc<AtomicU64>,
    /// The epoch of the last call that gave workers a batch.
    epoch: u64,
    /// Engine 0: the calling thread's lane.
    local: L,
    workers: Vec<Worker<L>>,
    /// Bit `k`: worker `k` was handed this call's batch and has not given
    /// the lane back yet.
    out: u32,
}

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

impl<L: Lane> Pool<L> {
    /// One engine per codec, capped by the batch size; `lane` builds a lane
    /// (true: for a worker).
    fn new<C>(
        batch_size: usize,
        codecs: Vec<C>,
        lane: impl Fn(C, Arc<AtomicU64>, bool) -> L,
    ) -> Result<Pool<L>, BatchError> {
        let (plan, engines) = Plan::new(batch_size, codecs.len())?;
        let claims = Arc::new(AtomicU64::new(0));
        let mut codecs = codecs.into_iter().take(engines);
        let first = codecs.next().ok_or(BatchError::NoEngines)?;
        let local = lane(first, claims.clone(), false);
        let mut workers = Vec::with_capacity(engines - 1);
        for (k, codec) in codecs.enumerate() {
            workers.push(Worker::spawn(k + 1, lane(codec, claims.clone(), true))?);
        }
        Ok(Pool {
            plan,
            claims,
            epoch: 0,
            local,
            workers,
            out: 0,
        })
    }

    fn engines(&self) -> usize {
        1 + self.workers.len()
    }

    /// Marks the batch object unusable: engine `e` died.
    fn lose(&mut self, e: usize) -> BatchError {
        self.plan.lost = Some(e);
        BatchError::EngineLost(e)
    }

    /// Takes back, without waiting, lanes that workers have returned since
    /// they were last used; fails if a worker died.
    fn reclaim(&mut self) -> Result<(), BatchError> {
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

    /// Starts a call: a single unit, or no worker at home, stays with the
    /// caller; otherwise a new epoch opens the claim counter and every
    /// worker at home (at most one per unit it could take) gets copies of
    /// the units from `base` on, half the caller's fair share: the caller
    /// claims from the bottom, so the workers are short of units only if
    /// the caller does less than half its share meanwhile.
    fn begin(&mut self, units: &[&[u8]]) -> Result<Turn, BatchError> {
        let n = units.len();
        self.plan.len = 0;
        self.out = 0;
        let mut turn = Turn {
            shared: false,
            epoch: self.epoch,
            n,
            next: 0,
        };
        self.local.reset(self.epoch, 0);
        if n <= 1 || self.workers.iter().all(|w| w.lane.is_none()) {
            return Ok(turn);
        }
        self.epoch = (self.epoch + 1) & EPOCH_MASK;
        self.claims.store(opened(self.epoch, n), Ordering::Release);
        turn.shared = true;
        turn.epoch = self.epoch;
        let base = (n / (2 * self.engines())).max(1);
        let mut helpers = 0;
        for k in 0..self.workers.len() {
            if helpers == n - base {
                break;
            }
            let w = &mut self.workers[k];
            let Some(lane) = w.lane.as_mut() else {
                continue;
            };
            lane.reset(self.epoch, base);
            lane.stage(&units[base..]);
            if !w.send() {
                return Err(self.lose(k + 1));
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
    fn finish(
        &mut self,
        turn: Turn,
        mut collected: impl FnMut(usize, &L),
    ) -> Result<(), BatchError> {
        let Pool {
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
                match workers[k].back.recv() {
                    Ok(lane) => {
                        missing -= record(plan, turn.epoch, k + 1, &*lane, &mut collected);
                        workers[k].lane = Some(lane);
                        *out = 0;
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
            return Err(self.lose(e));
        }
        debug_assert_eq!(missing, 0);
        self.plan.len = n;
        Ok(())
    }

    fn lane(&self, engine: usize) -> &L {
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

/// Compresses one unit as engine 0 and every worker do: the single code path.
#[inline]
fn compress_unit<C: PageCompressor>(
    codec: &mut C,
    unit: &[u8],
    out: &mut Vec<u8>,
) -> UnitStatus<C::Error> {
    UnitStatus::from_result(codec.compress_page(unit, out))
}

/// Units (or streams) copied in for a worker, back to back, with the
/// (offset, length) of each: both lane kinds stage their input this way.
struct Staged {
    bytes: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl Staged {
    /// Room for `slots` units of up to 4 KiB (none for engine 0, which works
    /// on the caller's slices).
    fn new(slots: usize, worker: bool) -> Staged {
        let slots = if worker { slots } else { 0 };
        Staged {
            bytes: Vec::with_capacity(slots * PAGE_SIZE),
            spans: Vec::with_capacity(slots),
        }
    }

    /// Copies `units` in, replacing what was staged.
    fn stage(&mut self, units: &[&[u8]]) {
        self.bytes.clear();
        self.spans.clear();
        for u in units {
            self.spans.push((self.bytes.len(), u.len()));
            self.bytes.extend_from_slice(u);
        }
    }

    /// The `k`-th staged unit.
    fn get(&self, k: usize) -> &[u8] {
        let (at, len) = self.spans[k];
        &self.bytes[at..at + len]
    }
}

/// One engine's codec and buffers for compression.
struct CompressLane<C: PageCompressor> {
    codec: C,
    ticket: Ticket,
    /// Units copied in for a worker.
    staged: Staged,
    /// One output buffer per slot.
    outs: Vec<Vec<u8>>,
    status: Vec<UnitStatus<C::Error>>,
}

impl<C: PageCompressor> CompressLane<C> {
    fn new(codec: C, claims: Arc<AtomicU64>, slots: usize, worker: bool) -> Self {
        CompressLane {
            codec,
            ticket: Ticket::new(claims, slots),
            staged: Staged::new(slots, worker),
            // Room for the encoder to run a little past the limit before it stops.
            outs: (0..slots)
                .map(|_| Vec::with_capacity(PAGE_SIZE + 1024))
                .collect(),
            status: Vec::with_capacity(slots),
        }
    }

    /// Engine 0's job: compress unit `i` of the call from the caller's slice.
    #[inline]
    fn run_direct(&mut self, i: usize, unit: &[u8]) {
        let slot = self.ticket.done.len();
        let s = compress_unit(&mut self.codec, unit, &mut self.outs[slot]);
        self.status.push(s);
        self.ticket.done.push(i as u8);
    }
}

impl<C: PageCompressor> Lane for CompressLane<C> {
    fn ticket(&self) -> &Ticket {
        &self.ticket
    }

    fn reset(&mut self, epoch: u64, base: usize) {
        self.ticket.reset(epoch, base);
        self.status.clear();
    }

    fn stage(&mut self, units: &[&[u8]]) {
        self.staged.stage(units);
    }

    fn run_staged(&mut self) {
        while let Some(i) = self.ticket.claim() {
            let slot = self.ticket.done.len();
            let unit = self.staged.get(i - self.ticket.base);
            let s = compress_unit(&mut self.codec, unit, &mut self.outs[slot]);
            self.status.push(s);
            self.ticket.done.push(i as u8);
        }
    }
}

/// Compresses batches of up to `batch_size` units on `engines` engines.
pub struct BatchCompressor<C: PageCompressor> {
    pool: Pool<CompressLane<C>>,
}

impl<C: PageCompressor> fmt::Debug for BatchCompressor<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchCompressor")
            .field("batch_size", &self.pool.plan.batch_size)
            .field("engines", &self.engines())
            .finish()
    }
}

impl<C: PageCompressor> BatchCompressor<C> {
    /// A batch compressor with one engine per codec (the first runs on the
    /// calling thread, each other one on its own worker thread, started
    /// here). Codecs beyond `batch_size` are dropped: they would never get
    /// a unit.
    pub fn new(batch_size: usize, codecs: Vec<C>) -> Result<Self, BatchError> {
        let pool = Pool::new(batch_size, codecs, |codec, claims, worker| {
            CompressLane::new(codec, claims, batch_size, worker)
        })?;
        Ok(BatchCompressor { pool })
    }

    /// Units per call at most.
    pub fn batch_size(&self) -> usize {
        self.pool.plan.batch_size
    }

    /// Engines (the calling thread plus the workers).
    pub fn engines(&self) -> usize {
        self.pool.engines()
    }

    /// Compresses up to `batch_size` units (each at most 4096 bytes) in one
    /// call; the result gives each unit's status and bytes.
    pub fn compress<'a, I>(&mut self, units: I) -> Result<CompressedBatch<'_, C>, BatchError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        self.pool.reclaim()?;
        let (arr, n) = self.pool.plan.gather(units)?;
        let units = &arr[..n];
        let mut turn = self.pool.begin(units)?;
        while let Some(i) = turn.next(&self.pool.claims) {
            self.pool.local.run_direct(i, units[i]);
        }
        self.pool.finish(turn, |_, _| {})?;
        Ok(CompressedBatch { owner: self })
    }

    /// Compresses a folio: its bytes split into 4 KiB units (the last may
    /// be shorter), at most `batch_size` of them.
    pub fn compress_folio(&mut self, folio: &[u8]) -> Result<CompressedBatch<'_, C>, BatchError> {
        self.compress(folio.chunks(PAGE_SIZE))
    }
}

/// The results of one compression call, valid until the next call.
pub struct CompressedBatch<'a, C: PageCompressor> {
    owner: &'a BatchCompressor<C>,
}

impl<C: PageCompressor> fmt::Debug for CompressedBatch<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|(s, _)| s)).finish()
    }
}

impl<'a, C: PageCompressor> CompressedBatch<'a, C> {
    /// Units in the batch.
    pub fn len(&self) -> usize {
        self.owner.pool.plan.len
    }

    /// True for a call with no units.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unit `i`'s status. Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> &'a UnitStatus<C::Error> {
        let pool = &self.owner.pool;
        let (e, s) = pool.plan.locate(i);
        &pool.lane(e).status[s]
    }

    /// Unit `i`'s compressed bytes, if it was compressed.
    pub fn data(&self, i: usize) -> Option<&'a [u8]> {
        let pool = &self.owner.pool;
        let (e, s) = pool.plan.locate(i);
        let lane = pool.lane(e);
        match lane.status[s] {
            UnitStatus::Compressed(n) => Some(&lane.outs[s][..n]),
            _ => None,
        }
    }

    /// Every unit's status and compressed bytes, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a UnitStatus<C::Error>, Option<&'a [u8]>)> + '_ {
        (0..self.len()).map(move |i| (self.status(i), self.data(i)))
    }

    /// True if every unit compressed (no incompressible or failed unit):
    /// the kernel's "batch returned 0".
    pub fn all_compressed(&self) -> bool {
        self.iter()
            .all(|(s, _)| matches!(s, UnitStatus::Compressed(_)))
    }
}

/// Decodes one stream as engine 0 and every worker do.
#[inline]
fn decompress_unit<D: PageDecompressor>(
    codec: &mut D,
    data: &[u8],
    out: &mut [u8],
) -> Result<usize, D::Error> {
    codec.decompress_page(data, out)
}

/// One engine's codec and buffers for decompression.
struct DecompressLane<D: PageDecompressor> {
    codec: D,
    ticket: Ticket,
    /// Streams copied in for a worker.
    staged: Staged,
    /// 4 KiB output slots (workers only; engine 0 writes to the caller's buffer).
    output: Vec<u8>,
    status: Vec<Result<usize, D::Error>>,
}

impl<D: PageDecompressor> DecompressLane<D> {
    fn new(codec: D, claims: Arc<AtomicU64>, slots: usize, worker: bool) -> Self {
        let bytes = if worker { slots * PAGE_SIZE } else { 0 };
        DecompressLane {
            codec,
            ticket: Ticket::new(claims, slots),
            staged: Staged::new(slots, worker),
            output: vec![0; bytes],
            status: Vec::with_capacity(slots),
        }
    }

    /// Engine 0's job: decode stream `i` into the caller's `i`-th slot.
    #[inline]
    fn run_direct(&mut self, i: usize, data: &[u8], out: &mut [u8]) {
        let slot = &mut out[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
        let r = decompress_unit(&mut self.codec, data, slot);
        self.status.push(r);
        self.ticket.done.push(i as u8);
    }
}

impl<D: PageDecompressor> Lane for DecompressLane<D> {
    fn ticket(&self) -> &Ticket {
        &self.ticket
    }

    fn reset(&mut self, epoch: u64, base: usize) {
        self.ticket.reset(epoch, base);
        self.status.clear();
    }

    fn stage(&mut self, streams: &[&[u8]]) {
        self.staged.stage(streams);
    }

    fn run_staged(&mut self) {
        while let Some(i) = self.ticket.claim() {
            let slot = self.ticket.done.len();
            let data = self.staged.get(i - self.ticket.base);
            let out = &mut self.output[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
            let r = decompress_unit(&mut self.codec, data, out);
            self.status.push(r);
            self.ticket.done.push(i as u8);
        }
    }
}

/// Decompresses batches of up to `batch_size` streams on `engines` engines.
pub struct BatchDecompressor<D: PageDecompressor> {
    pool: Pool<DecompressLane<D>>,
}

impl<D: PageDecompressor> fmt::Debug for BatchDecompressor<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchDecompressor")
            .field("batch_size", &self.pool.plan.batch_size)
            .field("engines", &self.engines())
            .finish()
    }
}

impl<D: PageDecompressor> BatchDecompressor<D> {
    /// A batch decompressor with one engine per codec; see [`BatchCompressor::new`].
    pub fn new(batch_size: usize, codecs: Vec<D>) -> Result<Self, BatchError> {
        let pool = Pool::new(batch_size, codecs, |codec, claims, worker| {
            DecompressLane::new(codec, claims, batch_size, worker)
        })?;
        Ok(BatchDecompressor { pool })
    }

    /// Streams per call at most.
    pub fn batch_size(&self) -> usize {
        self.pool.plan.batch_size
    }

    /// Engines (the calling thread plus the workers).
    pub fn engines(&self) -> usize {
        self.pool.engines()
    }

    /// Decodes up to `batch_size` streams; stream `i` goes to
    /// `out[i * 4096..(i + 1) * 4096]` (4096 bytes is each stream's limit).
    /// On a unit's error its slot's contents are unspecified.
    pub fn decompress<'a, I>(
        &mut self,
        streams: I,
        out: &mut [u8],
    ) -> Result<DecompressedBatch<'_, D>, BatchError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        self.pool.reclaim()?;
        let (arr, n) = self.pool.plan.gather(streams)?;
        if out.len() < n * PAGE_SIZE {
            return Err(BatchError::OutputTooSmall {
                units: n,
                bytes: out.len(),
            });
        }
        let streams = &arr[..n];
        let mut turn = self.pool.begin(streams)?;
        while let Some(i) = turn.next(&self.pool.claims) {
            self.pool.local.run_direct(i, streams[i], out);
        }
        self.pool.finish(turn, |_, lane| {
            // Copy the worker's pages into the caller's slots.
            for (slot, &i) in lane.ticket.done.iter().enumerate() {
                if let Ok(len) = lane.status[slot] {
                    let dst = i as usize * PAGE_SIZE;
                    let src = slot * PAGE_SIZE;
                    out[dst..dst + len].copy_from_slice(&lane.output[src..src + len]);
                }
            }
        })?;
        Ok(DecompressedBatch { owner: self })
    }
}

/// The statuses of one decompression call, valid until the next call.
pub struct DecompressedBatch<'a, D: PageDecompressor> {
    owner: &'a BatchDecompressor<D>,
}

impl<D: PageDecompressor> fmt::Debug for DecompressedBatch<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, D: PageDecompressor> DecompressedBatch<'a, D> {
    /// Streams in the batch.
    pub fn len(&self) -> usize {
        self.owner.pool.plan.len
    }

    /// True for a call with no streams.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stream `i`'s result: bytes produced, or the decoder's error.
    /// Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> Result<usize, &'a D::Error> {
        let pool = &self.owner.pool;
        let (e, s) = pool.plan.locate(i);
        match &pool.lane(e).status[s] {
            Ok(n) => Ok(*n),
            Err(err) => Err(err),
        }
    }

    /// Every stream's result, in order.
    pub fn iter(&self) -> impl Iterator<Item = Result<usize, &'a D::Error>> + '_ {
        (0..self.len()).map(move |i| self.status(i))
    }

    /// True if every stream decoded.
    pub fn all_ok(&self) -> bool {
        self.iter().all(|r| r.is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, Level, Mode};

    fn fixed_encoders(n: usize) -> Vec<Encoder> {
        (0..n)
            .map(|_| Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap())
            .collect()
    }

    #[test]
    fn batch_size_bounds() {
        assert_eq!(
            BatchCompressor::new(0, fixed_encoders(1)).unwrap_err(),
            BatchError::BatchSize(0)
        );
        assert_eq!(
            BatchCompressor::new(33, fixed_encoders(1)).unwrap_err(),
            BatchError::BatchSize(33)
        );
        assert_eq!(
            BatchCompressor::<Encoder>::new(8, Vec::new()).unwrap_err(),
            BatchError::NoEngines
        );
        assert!(BatchCompressor::new(1, fixed_encoders(1)).is_ok());
        assert!(BatchCompressor::new(32, fixed_encoders(1)).is_ok());
    }

    #[test]
    fn engines_are_capped_by_the_batch_size() {
        let b = BatchCompressor::new(2, fixed_encoders(4)).unwrap();
        assert_eq!(b.engines(), 2);
    }

    #[test]
    fn split_covers_every_unit_once() {
        // 5 units on 3 engines, many times: however the claims fall, the
        // owner map names each unit exactly once and each result decodes to
        // its own unit.
        let pages: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 100 + i as usize]).collect();
        let mut b = BatchCompressor::new(8, fixed_encoders(3)).unwrap();
        let mut dec = Decoder::new(Mode::Fixed, Format::Deflate, None).unwrap();
        for _ in 0..200 {
            let r = b.compress(pages.iter().map(|p| &p[..])).unwrap();
            assert_eq!(r.len(), 5);
            let mut owners: Vec<(u8, u8)> = b.pool.plan.owner[..5].to_vec();
            owners.sort_unstable();
            owners.dedup();
            assert_eq!(owners.len(), 5, "two units share a slot");
            let r = CompressedBatch { owner: &b };
            for (i, p) in pages.iter().enumerate() {
                let mut out = [0u8; PAGE_SIZE];
                let n = dec.decompress_page(r.data(i).unwrap(), &mut out).unwrap();
                assert_eq!(&out[..n], &p[..]);
            }
        }
    }

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

    #[test]
    fn a_stale_lane_does_nothing() {
        let claims = Arc::new(AtomicU64::new(0));
        let mut lane = CompressLane::new(fixed_encoders(1).remove(0), claims.clone(), 4, true);
        let units: [&[u8]; 4] = [b"aaaa", b"bbbb", b"cccc", b"dddd"];
        lane.reset(7, 1);
        lane.stage(&units[1..]);
        // The counter is at a newer call that still has unclaimed units.
        claims.store(opened(8, 4), Ordering::Release);
        lane.run_staged();
        assert!(lane.ticket.done.is_empty());
        assert!(lane.status.is_empty());
        // Its own call, with unit 0 taken by the caller: it takes every unit
        // left from the top down.
        claims.store(opened(7, 4) + (1 << 8), Ordering::Release);
        lane.run_staged();
        assert_eq!(lane.ticket.done, [3, 2, 1]);
        assert_eq!(lane.status.len(), 3);
        let mut dec = Decoder::new(Mode::Fixed, Format::Deflate, None).unwrap();
        for (slot, &i) in lane.ticket.done.iter().enumerate() {
            let UnitStatus::Compressed(n) = lane.status[slot] else {
                panic!("unit {i} compresses");
            };
            let mut out = [0u8; PAGE_SIZE];
            let m = dec
                .decompress_page(&lane.outs[slot][..n], &mut out)
                .unwrap();
            assert_eq!(&out[..m], units[i as usize], "slot {slot} holds unit {i}");
        }
    }
}
