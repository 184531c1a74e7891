//! Batch compression: the compression lane (one worker's codec, the call's
//! loan and output buffers), [`BatchCompressor`] and its results,
//! [`CompressedBatch`].

use std::fmt;
use std::sync::Arc;

use super::claim::{Board, Ticket};
use super::loan::Loan;
use super::seat::Lane;
use super::worker::Workers;
use super::{BatchError, Bound, UnitStatus};
use crate::engine::{Engine, EngineError};
use cannery_codec::constants::PAGE_SIZE;

/// Compresses one unit as worker 0 and every other worker do: the single code path.
#[inline]
fn compress_unit<C: Engine + Send + 'static>(
    codec: &mut Bound<C>,
    unit: &[u8],
    out: &mut Vec<u8>,
) -> UnitStatus<EngineError> {
    UnitStatus::from_result(codec.compress_page(unit, out))
}

/// One worker's codec and buffers for compression.
struct CompressLane<C: Engine + Send + 'static> {
    codec: Bound<C>,
    ticket: Ticket,
    /// One output buffer per slot.
    outs: Vec<Vec<u8>>,
    status: Vec<UnitStatus<EngineError>>,
}

impl<C: Engine + Send + 'static> CompressLane<C> {
    fn new(codec: Bound<C>, board: Arc<Board>, slots: usize) -> Self {
        CompressLane {
            codec,
            ticket: Ticket::new(board, slots),
            // Room for the encoder to run a little past the limit before it stops.
            outs: (0..slots)
                .map(|_| Vec::with_capacity(PAGE_SIZE + 1024))
                .collect(),
            status: Vec::with_capacity(slots),
        }
    }

    /// Compresses unit `i` of the call into this lane's next slot (worker 0
    /// passes the caller's slice, a worker the loan's).
    #[inline]
    fn run(&mut self, i: usize, unit: &[u8]) {
        let slot = self.ticket.done.len();
        let s = compress_unit(&mut self.codec, unit, &mut self.outs[slot]);
        self.status.push(s);
        self.ticket.done.push(i as u8);
    }
}

impl<C: Engine + Send + 'static> Lane for CompressLane<C> {
    fn ticket(&self) -> &Ticket {
        &self.ticket
    }

    fn reset(&mut self, epoch: u64) {
        self.ticket.reset(epoch);
        self.status.clear();
    }

    #[allow(unsafe_code)]
    fn run_claimed(&mut self) {
        while let Some(k) = self.ticket.claim() {
            // SAFETY: this lane claimed `k` of its call, and that call waits
            // for this lane before it ends (`Workers::call`).
            let loan = unsafe { self.ticket.loan() };
            let i = loan.claimed(k);
            // SAFETY: as above; claim `k` stands for unit `i` alone.
            let unit = unsafe { loan.unit(i) };
            self.run(i, unit);
        }
    }
}

/// Compresses batches of up to `batch_size` units on `workers` workers.
pub struct BatchCompressor<C: Engine + Send + 'static> {
    workers: Workers<CompressLane<C>>,
}

impl<C: Engine + Send + 'static> fmt::Debug for BatchCompressor<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchCompressor")
            .field("batch_size", &self.workers.plan.batch_size)
            .field("workers", &self.workers())
            .finish()
    }
}

impl<C: Engine + Send + 'static> BatchCompressor<C> {
    /// A batch compressor with one worker per codec (the first runs on the
    /// calling thread, each other one on its own worker thread, started
    /// here). Codecs beyond `batch_size` are dropped: they would never get
    /// a unit.
    pub fn new(batch_size: usize, codecs: Vec<Bound<C>>) -> Result<Self, BatchError> {
        let workers = Workers::new(batch_size, codecs, |codec, board| {
            CompressLane::new(codec, board, batch_size)
        })?;
        Ok(BatchCompressor { workers })
    }

    /// Units per call at most.
    pub fn batch_size(&self) -> usize {
        self.workers.plan.batch_size
    }

    /// Workers (the calling thread plus the worker threads).
    pub fn workers(&self) -> usize {
        self.workers.count()
    }

    /// Compresses up to `batch_size` units (each at most 4096 bytes) in one
    /// call; the result gives each unit's status and bytes.
    pub fn compress<'a, I>(&mut self, units: I) -> Result<CompressedBatch<'_, C>, BatchError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        self.workers.reclaim()?;
        let (arr, n) = self.workers.plan.gather(units)?;
        let units = &arr[..n];
        let loan = Loan::new(units, None);
        self.workers.call(
            n,
            &loan,
            |lane, k| {
                let i = loan.claimed(k);
                lane.run(i, units[i])
            },
            |_, _| {},
        )?;
        Ok(CompressedBatch { owner: self })
    }

    /// Compresses a folio: its bytes split into 4 KiB units (the last may
    /// be shorter), at most `batch_size` of them.
    pub fn compress_folio(&mut self, folio: &[u8]) -> Result<CompressedBatch<'_, C>, BatchError> {
        self.compress(folio.chunks(PAGE_SIZE))
    }
}

/// The results of one compression call, valid until the next call.
pub struct CompressedBatch<'a, C: Engine + Send + 'static> {
    owner: &'a BatchCompressor<C>,
}

impl<C: Engine + Send + 'static> fmt::Debug for CompressedBatch<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|(s, _)| s)).finish()
    }
}

impl<'a, C: Engine + Send + 'static> CompressedBatch<'a, C> {
    /// Units in the batch.
    pub fn len(&self) -> usize {
        self.owner.workers.plan.len
    }

    /// True for a call with no units.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unit `i`'s status. Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> &'a UnitStatus<EngineError> {
        let workers = &self.owner.workers;
        let (w, s) = workers.plan.locate(i);
        &workers.lane(w).status[s]
    }

    /// Unit `i`'s compressed bytes, if it was compressed.
    pub fn data(&self, i: usize) -> Option<&'a [u8]> {
        let workers = &self.owner.workers;
        let (w, s) = workers.plan.locate(i);
        let lane = workers.lane(w);
        match lane.status[s] {
            UnitStatus::Compressed(n) => Some(&lane.outs[s][..n]),
            _ => None,
        }
    }

    /// Every unit's status and compressed bytes, in order.
    pub fn iter(
        &self,
    ) -> impl Iterator<Item = (&'a UnitStatus<EngineError>, Option<&'a [u8]>)> + '_ {
        (0..self.len()).map(move |i| (self.status(i), self.data(i)))
    }

    /// True if every unit compressed (no incompressible or failed unit):
    /// the kernel's "batch returned 0".
    pub fn all_compressed(&self) -> bool {
        self.iter()
            .all(|(s, _)| matches!(s, UnitStatus::Compressed(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::software::Software;
    use crate::batch::claim::caller_turn;
    use cannery_codec::{Format, Level, Mode};

    fn fixed() -> Bound<Software> {
        Bound::new(
            Software::with_format(Level::Fast, Format::Deflate),
            Mode::Fixed,
            None,
        )
    }

    fn fixed_encoders(n: usize) -> Vec<Bound<Software>> {
        (0..n).map(|_| fixed()).collect()
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
            BatchCompressor::<Software>::new(8, Vec::new()).unwrap_err(),
            BatchError::NoWorkers
        );
        assert!(BatchCompressor::new(1, fixed_encoders(1)).is_ok());
        assert!(BatchCompressor::new(32, fixed_encoders(1)).is_ok());
    }

    #[test]
    fn engines_are_capped_by_the_batch_size() {
        let b = BatchCompressor::new(2, fixed_encoders(4)).unwrap();
        assert_eq!(b.workers(), 2);
    }

    #[test]
    fn split_covers_every_unit_once() {
        // 5 units on 3 workers, many times: however the claims fall, the
        // owner map names each unit exactly once and each result decodes to
        // its own unit.
        let pages: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 100 + i as usize]).collect();
        let mut b = BatchCompressor::new(8, fixed_encoders(3)).unwrap();
        let mut dec = fixed();
        for _ in 0..200 {
            let r = b.compress(pages.iter().map(|p| &p[..])).unwrap();
            assert_eq!(r.len(), 5);
            let mut owners: Vec<(u8, u8)> = b.workers.plan.owner[..5].to_vec();
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
    fn a_stale_lane_does_nothing() {
        let board = Arc::new(Board::new());
        let mut lane = CompressLane::new(fixed_encoders(1).remove(0), board.clone(), 4);
        let units: [&[u8]; 4] = [b"aaaa", b"bbbb", b"cccc", b"dddd"];
        let loan = Loan::new(&units, None);
        lane.reset(7);
        // The counter is at a newer call that still has unclaimed units.
        board.open(8, 4, &loan);
        lane.run_claimed();
        assert!(lane.ticket.done.is_empty());
        assert!(lane.status.is_empty());
        // Its own call, with unit 0 taken by the caller: it takes every unit
        // left from the top down.
        board.open(7, 4, &loan);
        assert_eq!(caller_turn(7, 4).next(&board), Some(0));
        lane.run_claimed();
        assert_eq!(lane.ticket.done, [3, 2, 1]);
        assert_eq!(lane.status.len(), 3);
        let mut dec = fixed();
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
