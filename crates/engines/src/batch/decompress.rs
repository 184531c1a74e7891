//! Batch decompression: the decompression lane (one worker's codec and the
//! call's loan: its streams and the caller's 4 KiB output slots),
//! [`BatchDecompressor`] and its results, [`DecompressedBatch`].
//!
//! The caller decodes its units straight into their slots. A worker decodes
//! into a page of its own and then copies the page into the slot: the
//! caller's slots are usually in the caller's cache (it read the last
//! call's pages), and a decoder writing into them word by word waits for
//! each line to be taken over from the other core, while one 4 KiB copy
//! writes whole lines. Measured (`cannery zswap-sim --engines 2`, three
//! sweeps each way, interleaved): loads at batch 8 2.32–2.51 µs a page in
//! place, 2.20–2.39 through the worker's page.

use std::fmt;
use std::sync::Arc;

use super::claim::{Board, Ticket};
use super::loan::Loan;
use super::seat::Lane;
use super::worker::Workers;
use super::{BatchError, Bound};
use crate::engine::{Engine, EngineError};
use cannery_codec::constants::PAGE_SIZE;

/// Decodes one stream as worker 0 and every other worker do.
#[inline]
fn decompress_unit<D: Engine + Send + 'static>(
    codec: &mut Bound<D>,
    data: &[u8],
    out: &mut [u8],
) -> Result<usize, EngineError> {
    codec.decompress_page(data, out)
}

/// One worker's codec and buffers for decompression.
struct DecompressLane<D: Engine + Send + 'static> {
    codec: Bound<D>,
    ticket: Ticket,
    status: Vec<Result<usize, EngineError>>,
    /// A worker's own page, which it decodes into before copying out.
    page: Box<[u8; PAGE_SIZE]>,
}

impl<D: Engine + Send + 'static> DecompressLane<D> {
    fn new(codec: Bound<D>, board: Arc<Board>, slots: usize) -> Self {
        DecompressLane {
            codec,
            ticket: Ticket::new(board, slots),
            status: Vec::with_capacity(slots),
            page: Box::new([0; PAGE_SIZE]),
        }
    }

    /// The caller's job: decodes the stream of claim `k` of the call
    /// (stream `i`) into the caller's `i`-th slot.
    ///
    /// # Safety
    /// The caller took claim `k` from the bottom of the counter during the
    /// call that made `loan`, and that call has not ended.
    #[allow(unsafe_code)]
    #[inline]
    unsafe fn run(&mut self, loan: &Loan, k: usize) {
        let i = loan.claimed(k);
        // SAFETY: this function's contract; claims are taken once each and
        // stand for distinct units, so only the claimer of `k` writes slot `i`.
        let (data, slot) = unsafe { (loan.unit(i), loan.out_slot(i)) };
        let r = decompress_unit(&mut self.codec, data, slot);
        self.status.push(r);
        self.ticket.done.push(i as u8);
    }

    /// A worker's job: decodes the stream of claim `k` (stream `i`) into
    /// its own page, then copies what it produced into the caller's `i`-th
    /// slot (on an error the slot is left as it was).
    ///
    /// # Safety
    /// As [`Self::run`], with `k` claimed by this worker.
    #[allow(unsafe_code)]
    #[inline]
    unsafe fn run_on_own_page(&mut self, loan: &Loan, k: usize) {
        let i = loan.claimed(k);
        // SAFETY: this function's contract; only the claimer of `k` writes
        // slot `i`.
        let (data, slot) = unsafe { (loan.unit(i), loan.out_slot(i)) };
        let r = decompress_unit(&mut self.codec, data, &mut self.page[..]);
        if let Ok(n) = r {
            slot[..n].copy_from_slice(&self.page[..n]);
        }
        self.status.push(r);
        self.ticket.done.push(i as u8);
    }
}

impl<D: Engine + Send + 'static> Lane for DecompressLane<D> {
    fn ticket(&self) -> &Ticket {
        &self.ticket
    }

    fn reset(&mut self, epoch: u64) {
        self.ticket.reset(epoch);
        self.status.clear();
    }

    #[allow(unsafe_code)]
    fn run_claimed(&mut self) {
        while let Some(i) = self.ticket.claim() {
            // SAFETY: claimed under the call's epoch; the call waits for this
            // lane before it ends (`Workers::call`), so its loan is alive.
            unsafe {
                let loan = self.ticket.loan();
                self.run_on_own_page(loan, i);
            }
        }
    }
}

/// Decompresses batches of up to `batch_size` streams on `workers` workers.
pub struct BatchDecompressor<D: Engine + Send + 'static> {
    workers: Workers<DecompressLane<D>>,
}

impl<D: Engine + Send + 'static> fmt::Debug for BatchDecompressor<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchDecompressor")
            .field("batch_size", &self.workers.plan.batch_size)
            .field("workers", &self.workers())
            .finish()
    }
}

impl<D: Engine + Send + 'static> BatchDecompressor<D> {
    /// A batch decompressor with one worker per codec; see
    /// [`BatchCompressor::new`](super::BatchCompressor::new).
    pub fn new(batch_size: usize, codecs: Vec<Bound<D>>) -> Result<Self, BatchError> {
        let workers = Workers::new(batch_size, codecs, |codec, board| {
            DecompressLane::new(codec, board, batch_size)
        })?;
        Ok(BatchDecompressor { workers })
    }

    /// Streams per call at most.
    pub fn batch_size(&self) -> usize {
        self.workers.plan.batch_size
    }

    /// Workers (the calling thread plus the worker threads).
    pub fn workers(&self) -> usize {
        self.workers.count()
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
        self.workers.reclaim()?;
        let (arr, n) = self.workers.plan.gather(streams)?;
        if out.len() < n * PAGE_SIZE {
            return Err(BatchError::OutputTooSmall {
                units: n,
                bytes: out.len(),
            });
        }
        let streams = &arr[..n];
        // Every worker, the caller too, writes its slots through the loan;
        // `out` is not touched again until the call has ended.
        let mut loan = Loan::new(streams, Some(out));
        loan.longest_first();
        self.workers.call(
            n,
            &loan,
            // SAFETY: the caller claimed `i` from the bottom of the counter
            // during the call that made the loan.
            #[allow(unsafe_code)]
            |lane, i| unsafe { lane.run(&loan, i) },
            |_, _| {},
        )?;
        Ok(DecompressedBatch { owner: self })
    }
}

/// The statuses of one decompression call, valid until the next call.
pub struct DecompressedBatch<'a, D: Engine + Send + 'static> {
    owner: &'a BatchDecompressor<D>,
}

impl<D: Engine + Send + 'static> fmt::Debug for DecompressedBatch<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, D: Engine + Send + 'static> DecompressedBatch<'a, D> {
    /// Streams in the batch.
    pub fn len(&self) -> usize {
        self.owner.workers.plan.len
    }

    /// True for a call with no streams.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stream `i`'s result: bytes produced, or the decoder's error.
    /// Panics if `i` is not below [`Self::len`].
    pub fn status(&self, i: usize) -> Result<usize, &'a EngineError> {
        let workers = &self.owner.workers;
        let (w, s) = workers.plan.locate(i);
        match &workers.lane(w).status[s] {
            Ok(n) => Ok(*n),
            Err(err) => Err(err),
        }
    }

    /// Every stream's result, in order.
    pub fn iter(&self) -> impl Iterator<Item = Result<usize, &'a EngineError>> + '_ {
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
    use crate::batch::claim::caller_turn;
    use crate::engine::Job;
    use cannery_codec::{Mode, Outcome};

    /// Copies a stream into its slot: a codec small enough for Miri, which
    /// checks the loan's reads and writes across threads.
    struct Copy;

    impl Engine for Copy {
        fn name(&self) -> &'static str {
            "copy"
        }

        fn capabilities(&self) -> &crate::engine::Capabilities {
            crate::engine::Capabilities::unchecked()
        }

        fn compress_job(&mut self, _: Job<'_>, _: &mut Vec<u8>) -> Result<Outcome, EngineError> {
            unreachable!("only decompresses")
        }

        fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
            let data = job.data;
            if data.first() == Some(&0xEE) {
                return Err(EngineError::Rejected {
                    backend: "copy",
                    message: "bad stream".into(),
                });
            }
            out[..data.len()].copy_from_slice(data);
            Ok(data.len())
        }
    }

    fn copies(n: usize) -> Vec<Bound<Copy>> {
        (0..n)
            .map(|_| Bound::new(Copy, Mode::Fixed, None))
            .collect()
    }

    fn streams(n: usize, seed: u8) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| vec![seed.wrapping_add(i as u8); 1 + (i * 37 + seed as usize) % 64])
            .collect()
    }

    #[test]
    fn every_engine_decodes_into_the_callers_slots() {
        for workers in [1, 2, 3] {
            let mut b = BatchDecompressor::new(8, copies(workers)).unwrap();
            let mut out = vec![0u8; 8 * PAGE_SIZE];
            for round in 0..if cfg!(miri) { 6 } else { 200 } {
                let n = 1 + round % 8;
                let mut s = streams(n, round as u8);
                if round % 5 == 4 {
                    s[n / 2][0] = 0xEE;
                }
                let r = b.decompress(s.iter().map(|x| &x[..]), &mut out).unwrap();
                assert_eq!(r.len(), n);
                for (i, x) in s.iter().enumerate() {
                    if x[0] == 0xEE {
                        assert_eq!(
                            r.status(i).unwrap_err().to_string(),
                            "copy rejected the stream: bad stream"
                        );
                    } else {
                        assert_eq!(r.status(i), Ok(x.len()), "round {round} stream {i}");
                        assert_eq!(&out[i * PAGE_SIZE..i * PAGE_SIZE + x.len()], &x[..]);
                    }
                }
            }
        }
    }

    #[test]
    fn a_stale_lane_touches_nothing() {
        let board = Arc::new(Board::new());
        let mut lane = DecompressLane::new(Bound::new(Copy, Mode::Fixed, None), board.clone(), 4);
        let s = streams(4, 9);
        let units: Vec<&[u8]> = s.iter().map(|x| &x[..]).collect();
        let mut out = vec![0u8; 4 * PAGE_SIZE];
        let loan = Loan::new(&units, Some(&mut out));
        lane.reset(7);
        // A newer call: nothing claimed, nothing written.
        board.open(8, 4, &loan);
        lane.run_claimed();
        assert!(lane.ticket.done.is_empty());
        // A closed counter (a call draining): the same.
        board.close(7);
        lane.run_claimed();
        assert!(lane.ticket.done.is_empty());
        assert!(out.iter().all(|&b| b == 0));
        // Its own call, unit 0 taken by the caller: the rest, top down, in
        // their own slots.
        board.open(7, 4, &loan);
        assert_eq!(caller_turn(7, 4).next(&board), Some(0));
        lane.run_claimed();
        assert_eq!(lane.ticket.done, [3, 2, 1]);
        assert!(out[..PAGE_SIZE].iter().all(|&b| b == 0));
        for i in 1..4 {
            assert_eq!(&out[i * PAGE_SIZE..i * PAGE_SIZE + s[i].len()], &s[i][..]);
        }
    }
}
