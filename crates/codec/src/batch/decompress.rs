//! Batch decompression: the decompression lane (one engine's codec, staged
//! streams and 4 KiB output slots), [`BatchDecompressor`] and its results,
//! [`DecompressedBatch`].

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::claim::Ticket;
use super::engine::{Engines, Lane, Staged};
use super::{BatchError, PageDecompressor};
use crate::constants::PAGE_SIZE;

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
    engines: Engines<DecompressLane<D>>,
}

impl<D: PageDecompressor> fmt::Debug for BatchDecompressor<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchDecompressor")
            .field("batch_size", &self.engines.plan.batch_size)
            .field("engines", &self.engines())
            .finish()
    }
}

impl<D: PageDecompressor> BatchDecompressor<D> {
    /// A batch decompressor with one engine per codec; see
    /// [`BatchCompressor::new`](super::BatchCompressor::new).
    pub fn new(batch_size: usize, codecs: Vec<D>) -> Result<Self, BatchError> {
        let engines = Engines::new(batch_size, codecs, |codec, claims, worker| {
            DecompressLane::new(codec, claims, batch_size, worker)
        })?;
        Ok(BatchDecompressor { engines })
    }

    /// Streams per call at most.
    pub fn batch_size(&self) -> usize {
        self.engines.plan.batch_size
    }

    /// Engines (the calling thread plus the workers).
    pub fn engines(&self) -> usize {
        self.engines.count()
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
        self.engines.reclaim()?;
        let (arr, n) = self.engines.plan.gather(streams)?;
        if out.len() < n * PAGE_SIZE {
            return Err(BatchError::OutputTooSmall {
                units: n,
                bytes: out.len(),
            });
        }
        let streams = &arr[..n];
        let mut turn = self.engines.begin(streams)?;
        while let Some(i) = turn.next(&self.engines.claims) {
            self.engines.local.run_direct(i, streams[i], out);
        }
        self.engines.finish(turn, |_, lane| {
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
        self.owner.engines.plan.len
    }

    /// True for a call with no streams.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stream `i`'s result: bytes produced, or the decoder's error.
    /// Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> Result<usize, &'a D::Error> {
        let engines = &self.owner.engines;
        let (e, s) = engines.plan.locate(i);
        match &engines.lane(e).status[s] {
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
