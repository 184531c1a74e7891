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
//! How the work is split: with `n` units and `e` engines, each engine takes
//! a contiguous share of `ceil(n / e)` units; engine 0 (the caller) takes the
//! first share and works on it while the workers work on theirs. Units for a
//! worker are copied into that worker's staging buffer (the crate forbids
//! `unsafe`, so workers cannot borrow the caller's memory); a worker's results
//! stay in its buffers until the next call. There is one channel hand-off per
//! worker per batch, no lock per unit.
//!
//! Batch size 1 is the plain single-page call: the one unit goes to engine 0,
//! the calling thread, which calls [`PageCompressor::compress_page`] directly
//! on the caller's slice, with no copy and no thread hand-off.
//!
//! No allocation per unit in steady state: every buffer (staging, outputs,
//! statuses, the channel slots of `sync_channel(1)`) is allocated in `new`
//! with room for a full batch and reused; the units of a call are gathered in
//! an array on the stack. Only a codec that allocates on its own (dynamic
//! mode builds a table per page; some peer libraries return fresh vectors),
//! an error value, or an oversized (invalid) unit allocates; std's channels
//! also allocate once per channel side the first time that side blocks.
//! The `cannery-benches` package checks this with a counting global
//! allocator (`tests/no_alloc.rs`).
//!
//! Not here: policy (what to do with incompressible pages, pools, same-filled
//! pages: see `cannery zswap-sim`), hardware queues (a QPL backend would
//! submit all units and poll, behind the same two traits), and timing.

use std::fmt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

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

/// A persistent worker thread and the lane (codec + buffers) it works on.
/// The lane travels to the thread for a batch and comes back with results.
struct Worker<L> {
    /// The lane while it is at home; `None` while the worker has it.
    lane: Option<L>,
    to: Option<SyncSender<L>>,
    back: Receiver<L>,
    handle: Option<JoinHandle<()>>,
}

impl<L: Send + 'static> Worker<L> {
    fn spawn(index: usize, lane: L, work: fn(&mut L)) -> Result<Worker<L>, BatchError> {
        let (to, rx) = sync_channel::<L>(1);
        let (tx, back) = sync_channel::<L>(1);
        let handle = std::thread::Builder::new()
            .name(format!("cannery-batch-{index}"))
            .spawn(move || {
                while let Ok(mut lane) = rx.recv() {
                    work(&mut lane);
                    if tx.send(lane).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| BatchError::Spawn(e.to_string()))?;
        Ok(Worker {
            lane: Some(lane),
            to: Some(to),
            back,
            handle: Some(handle),
        })
    }

    /// Hands the lane to the worker thread.
    fn send(&mut self) -> bool {
        match (self.lane.take(), &self.to) {
            (Some(lane), Some(to)) => to.send(lane).is_ok(),
            _ => false,
        }
    }

    /// Waits for the lane to come back; false if the worker died.
    fn receive(&mut self) -> bool {
        if self.lane.is_none() {
            match self.back.recv() {
                Ok(lane) => self.lane = Some(lane),
                Err(_) => return false,
            }
        }
        true
    }
}

impl<L> Drop for Worker<L> {
    fn drop(&mut self) {
        // Closing the channel ends the worker's loop.
        self.to = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Engines, batch size and the split of the last call, shared by both directions.
struct Plan {
    batch_size: usize,
    /// Units in the last successful call.
    len: usize,
    /// Units per engine in the last call.
    share: usize,
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
            share: 1,
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
        (i / self.share, i % self.share)
    }
}

/// Waits for lanes still out with workers (only after a call that
/// panicked); marks the batch object unusable if a worker died.
fn reclaim<L: Send + 'static>(
    plan: &mut Plan,
    workers: &mut [Worker<L>],
) -> Result<(), BatchError> {
    if let Some(e) = plan.lost {
        return Err(BatchError::EngineLost(e));
    }
    for (k, w) in workers.iter_mut().enumerate() {
        if !w.receive() {
            plan.lost = Some(k + 1);
            return Err(BatchError::EngineLost(k + 1));
        }
    }
    Ok(())
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

/// One engine's codec and buffers for compression.
struct CompressLane<C: PageCompressor> {
    codec: C,
    /// Units copied in for a worker, back to back.
    staged: Vec<u8>,
    /// Length of each staged unit.
    lens: Vec<usize>,
    /// One output buffer per slot.
    outs: Vec<Vec<u8>>,
    status: Vec<UnitStatus<C::Error>>,
}

impl<C: PageCompressor> CompressLane<C> {
    fn new(codec: C, slots: usize, staged: bool) -> Self {
        CompressLane {
            codec,
            staged: Vec::with_capacity(if staged { slots * PAGE_SIZE } else { 0 }),
            lens: Vec::with_capacity(slots),
            // Room for the encoder to run a little past the limit before it stops.
            outs: (0..slots)
                .map(|_| Vec::with_capacity(PAGE_SIZE + 1024))
                .collect(),
            status: Vec::with_capacity(slots),
        }
    }

    /// Stages units for a worker.
    fn stage(&mut self, units: &[&[u8]]) {
        self.staged.clear();
        self.lens.clear();
        for u in units {
            self.staged.extend_from_slice(u);
            self.lens.push(u.len());
        }
    }

    /// The worker's job: compress the staged units.
    fn run_staged(&mut self) {
        self.status.clear();
        let mut at = 0;
        for (slot, &len) in self.lens.iter().enumerate() {
            let unit = &self.staged[at..at + len];
            at += len;
            let s = compress_unit(&mut self.codec, unit, &mut self.outs[slot]);
            self.status.push(s);
        }
    }

    /// Engine 0's job: compress the caller's units in place.
    fn run_direct(&mut self, units: &[&[u8]]) {
        self.status.clear();
        for (slot, unit) in units.iter().enumerate() {
            let s = compress_unit(&mut self.codec, unit, &mut self.outs[slot]);
            self.status.push(s);
        }
    }
}

/// Compresses batches of up to `batch_size` units on `engines` engines.
pub struct BatchCompressor<C: PageCompressor> {
    plan: Plan,
    local: CompressLane<C>,
    workers: Vec<Worker<CompressLane<C>>>,
}

impl<C: PageCompressor> fmt::Debug for BatchCompressor<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchCompressor")
            .field("batch_size", &self.plan.batch_size)
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
        let (plan, engines) = Plan::new(batch_size, codecs.len())?;
        let share = batch_size.div_ceil(engines);
        let mut codecs = codecs.into_iter().take(engines);
        let first = codecs.next().ok_or(BatchError::NoEngines)?;
        let local = CompressLane::new(first, batch_size, false);
        let mut workers = Vec::with_capacity(engines - 1);
        for (k, codec) in codecs.enumerate() {
            let lane = CompressLane::new(codec, share, true);
            workers.push(Worker::spawn(k + 1, lane, CompressLane::run_staged)?);
        }
        Ok(BatchCompressor {
            plan,
            local,
            workers,
        })
    }

    /// Units per call at most.
    pub fn batch_size(&self) -> usize {
        self.plan.batch_size
    }

    /// Engines (the calling thread plus the workers).
    pub fn engines(&self) -> usize {
        1 + self.workers.len()
    }

    /// Compresses up to `batch_size` units (each at most 4096 bytes) in one
    /// call; the result gives each unit's status and bytes.
    pub fn compress<'a, I>(&mut self, units: I) -> Result<CompressedBatch<'_, C>, BatchError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        self.reclaim()?;
        let (arr, n) = self.plan.gather(units)?;
        let units = &arr[..n];
        let share = n.div_ceil(self.engines()).max(1);
        let busy = n.div_ceil(share).saturating_sub(1);
        self.plan.len = 0;
        self.plan.share = share;
        let mut result = Ok(());
        for (k, w) in self.workers[..busy].iter_mut().enumerate() {
            let chunk = &units[(k + 1) * share..((k + 2) * share).min(n)];
            if let Some(lane) = w.lane.as_mut() {
                lane.stage(chunk);
            }
            if !w.send() {
                result = Err(BatchError::EngineLost(k + 1));
            }
        }
        self.local.run_direct(&units[..share.min(n)]);
        for (k, w) in self.workers[..busy].iter_mut().enumerate() {
            if !w.receive() && result.is_ok() {
                result = Err(BatchError::EngineLost(k + 1));
            }
        }
        if let Err(BatchError::EngineLost(e)) = result {
            self.plan.lost = Some(e);
            return Err(BatchError::EngineLost(e));
        }
        self.plan.len = n;
        Ok(CompressedBatch { owner: self })
    }

    /// Compresses a folio: its bytes split into 4 KiB units (the last may
    /// be shorter), at most `batch_size` of them.
    pub fn compress_folio(&mut self, folio: &[u8]) -> Result<CompressedBatch<'_, C>, BatchError> {
        self.compress(folio.chunks(PAGE_SIZE))
    }

    /// Brings back lanes left with workers by a call that panicked.
    fn reclaim(&mut self) -> Result<(), BatchError> {
        reclaim(&mut self.plan, &mut self.workers)
    }

    fn lane(&self, engine: usize) -> &CompressLane<C> {
        if engine == 0 {
            &self.local
        } else {
            self.workers[engine - 1]
                .lane
                .as_ref()
                .expect("lanes are home after a successful call")
        }
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
        self.owner.plan.len
    }

    /// True for a call with no units.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unit `i`'s status. Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> &'a UnitStatus<C::Error> {
        let (e, s) = self.owner.plan.locate(i);
        &self.owner.lane(e).status[s]
    }

    /// Unit `i`'s compressed bytes, if it was compressed.
    pub fn data(&self, i: usize) -> Option<&'a [u8]> {
        let (e, s) = self.owner.plan.locate(i);
        let lane = self.owner.lane(e);
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
    staged: Vec<u8>,
    lens: Vec<usize>,
    /// 4 KiB output slots (workers only; engine 0 writes to the caller's buffer).
    output: Vec<u8>,
    status: Vec<Result<usize, D::Error>>,
}

impl<D: PageDecompressor> DecompressLane<D> {
    fn new(codec: D, slots: usize, worker: bool) -> Self {
        let bytes = if worker { slots * PAGE_SIZE } else { 0 };
        DecompressLane {
            codec,
            staged: Vec::with_capacity(bytes),
            lens: Vec::with_capacity(slots),
            output: vec![0; bytes],
            status: Vec::with_capacity(slots),
        }
    }

    fn stage(&mut self, streams: &[&[u8]]) {
        self.staged.clear();
        self.lens.clear();
        for s in streams {
            self.staged.extend_from_slice(s);
            self.lens.push(s.len());
        }
    }

    fn run_staged(&mut self) {
        self.status.clear();
        let mut at = 0;
        for (&len, slot) in self
            .lens
            .iter()
            .zip(self.output.chunks_exact_mut(PAGE_SIZE))
        {
            let data = &self.staged[at..at + len];
            at += len;
            let r = decompress_unit(&mut self.codec, data, slot);
            self.status.push(r);
        }
    }

    fn run_direct(&mut self, streams: &[&[u8]], out: &mut [u8]) {
        self.status.clear();
        for (data, slot) in streams.iter().zip(out.chunks_exact_mut(PAGE_SIZE)) {
            let r = decompress_unit(&mut self.codec, data, slot);
            self.status.push(r);
        }
    }
}

/// Decompresses batches of up to `batch_size` streams on `engines` engines.
pub struct BatchDecompressor<D: PageDecompressor> {
    plan: Plan,
    local: DecompressLane<D>,
    workers: Vec<Worker<DecompressLane<D>>>,
}

impl<D: PageDecompressor> fmt::Debug for BatchDecompressor<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchDecompressor")
            .field("batch_size", &self.plan.batch_size)
            .field("engines", &self.engines())
            .finish()
    }
}

impl<D: PageDecompressor> BatchDecompressor<D> {
    /// A batch decompressor with one engine per codec; see [`BatchCompressor::new`].
    pub fn new(batch_size: usize, codecs: Vec<D>) -> Result<Self, BatchError> {
        let (plan, engines) = Plan::new(batch_size, codecs.len())?;
        let share = batch_size.div_ceil(engines);
        let mut codecs = codecs.into_iter().take(engines);
        let first = codecs.next().ok_or(BatchError::NoEngines)?;
        let local = DecompressLane::new(first, batch_size, false);
        let mut workers = Vec::with_capacity(engines - 1);
        for (k, codec) in codecs.enumerate() {
            let lane = DecompressLane::new(codec, share, true);
            workers.push(Worker::spawn(k + 1, lane, DecompressLane::run_staged)?);
        }
        Ok(BatchDecompressor {
            plan,
            local,
            workers,
        })
    }

    /// Streams per call at most.
    pub fn batch_size(&self) -> usize {
        self.plan.batch_size
    }

    /// Engines (the calling thread plus the workers).
    pub fn engines(&self) -> usize {
        1 + self.workers.len()
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
        self.reclaim()?;
        let (arr, n) = self.plan.gather(streams)?;
        if out.len() < n * PAGE_SIZE {
            return Err(BatchError::OutputTooSmall {
                units: n,
                bytes: out.len(),
            });
        }
        let streams = &arr[..n];
        let share = n.div_ceil(self.engines()).max(1);
        let busy = n.div_ceil(share).saturating_sub(1);
        self.plan.len = 0;
        self.plan.share = share;
        let mut result = Ok(());
        for (k, w) in self.workers[..busy].iter_mut().enumerate() {
            let chunk = &streams[(k + 1) * share..((k + 2) * share).min(n)];
            if let Some(lane) = w.lane.as_mut() {
                lane.stage(chunk);
            }
            if !w.send() {
                result = Err(BatchError::EngineLost(k + 1));
            }
        }
        let first = share.min(n);
        self.local
            .run_direct(&streams[..first], &mut out[..first * PAGE_SIZE]);
        for (k, w) in self.workers[..busy].iter_mut().enumerate() {
            if !w.receive() {
                if result.is_ok() {
                    result = Err(BatchError::EngineLost(k + 1));
                }
                continue;
            }
            // Copy the worker's pages into the caller's slots.
            let lane = w.lane.as_ref().expect("received");
            let base = (k + 1) * share;
            for (j, r) in lane.status.iter().enumerate() {
                if let Ok(len) = *r {
                    let dst = (base + j) * PAGE_SIZE;
                    let src = j * PAGE_SIZE;
                    out[dst..dst + len].copy_from_slice(&lane.output[src..src + len]);
                }
            }
        }
        if let Err(BatchError::EngineLost(e)) = result {
            self.plan.lost = Some(e);
            return Err(BatchError::EngineLost(e));
        }
        self.plan.len = n;
        Ok(DecompressedBatch { owner: self })
    }

    /// Brings back lanes left with workers by a call that panicked.
    fn reclaim(&mut self) -> Result<(), BatchError> {
        reclaim(&mut self.plan, &mut self.workers)
    }

    fn lane(&self, engine: usize) -> &DecompressLane<D> {
        if engine == 0 {
            &self.local
        } else {
            self.workers[engine - 1]
                .lane
                .as_ref()
                .expect("lanes are home after a successful call")
        }
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
        self.owner.plan.len
    }

    /// True for a call with no streams.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stream `i`'s result: bytes produced, or the decoder's error.
    /// Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> Result<usize, &'a D::Error> {
        let (e, s) = self.owner.plan.locate(i);
        match &self.owner.lane(e).status[s] {
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
        // 5 units on 3 engines: shares of 2, so engines get 2, 2, 1.
        let pages: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 100 + i as usize]).collect();
        let mut b = BatchCompressor::new(8, fixed_encoders(3)).unwrap();
        let r = b.compress(pages.iter().map(|p| &p[..])).unwrap();
        assert_eq!(r.len(), 5);
        let mut dec = Decoder::new(Mode::Fixed, Format::Deflate, None).unwrap();
        for (i, p) in pages.iter().enumerate() {
            let mut out = [0u8; PAGE_SIZE];
            let n = dec.decompress_page(r.data(i).unwrap(), &mut out).unwrap();
            assert_eq!(&out[..n], &p[..]);
        }
    }
}
