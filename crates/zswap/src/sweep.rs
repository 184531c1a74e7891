//! A batch-size sweep: the same corpus replayed once per compression batch
//! size, each run with fresh codec lanes (one per engine) of one codec:
//! cannery's encoder and decoder in a mode, or a peer compressor. What
//! `cannery zswap-sim` runs ([`simulate`]: the sweep and its report);
//! [`crate::run`] is one run of it.

use cannery_codec::{Format, Level, Mode, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::peer::{Peer, PeerKind};

use cannery_codec::constants::PAGE_SIZE;
use cannery_lab::ModeKey;

use crate::replay::{run, Policy, RunConfig};
use crate::report::{BesideReport, LATENCY, POOL_MODEL};
use crate::{Error, FolioSize, ReplayCorpus, Report, RunReport};

/// Batch sizes swept when the caller names none.
pub const SWEEP: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Parallel workers when the caller names none: the CPUs, at most 8.
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// The codec a sweep replays with.
#[derive(Clone, Debug)]
pub enum SweepCodec {
    /// cannery's encoder and decoder (a table for canned mode).
    Cannery {
        /// Mode.
        mode: Mode,
        /// Format.
        format: Format,
        /// Level.
        level: Level,
        /// Table (canned mode).
        table: Option<Box<Table>>,
    },
    /// An outside compressor.
    Peer(PeerKind),
}

/// What a sweep varies and keeps.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Compression batch sizes, one run each.
    pub batches: Vec<usize>,
    /// Decompression batch size (default: the run's compression batch).
    pub decompress_batch: Option<usize>,
    /// Folio size.
    pub folio: FolioSize,
    /// Incompressible page policy.
    pub policy: Policy,
    /// Parallel workers of the batch path (codec lanes).
    pub workers: usize,
    /// Same-filled pages the corpus' captures counted (see [`RunConfig`]).
    pub unstored_same_filled: f64,
    /// Peers replayed with the same plan after the codec, each reported
    /// beside it (e.g. lz4 and zstd-1).
    pub beside: Vec<PeerKind>,
}

impl Sweep {
    /// Runs the whole plan makes: one per batch size, for the codec and
    /// for each peer beside it.
    pub fn run_count(&self) -> usize {
        self.batches.len() * (1 + self.beside.len())
    }
}

/// Runs `corpus` (pages back to back) once per batch size of `sweep`;
/// `progress` hears how many runs are done after each.
pub fn sweep(
    corpus: &[u8],
    codec: &SweepCodec,
    sweep: &Sweep,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<RunReport>, Error> {
    let setup = |what: &str, e: String| Error::Setup(format!("cannot set up the {what}: {e}"));
    sweep
        .batches
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let cfg = RunConfig {
                compress_batch: b,
                decompress_batch: sweep.decompress_batch.unwrap_or(b),
                folio: sweep.folio,
                policy: sweep.policy,
                unstored_same_filled: sweep.unstored_same_filled,
            };
            let n = sweep.workers;
            let report = match codec {
                SweepCodec::Cannery {
                    mode,
                    format,
                    level,
                    table,
                } => {
                    let t = table.as_deref();
                    let engines = || {
                        (0..n)
                            .map(|_| Software::bound(*mode, *format, *level, t))
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(|e| setup("encoder", e.to_string()))
                    };
                    run(corpus, cfg, engines()?, engines()?)
                }
                SweepCodec::Peer(kind) => {
                    let peers = || {
                        (0..n)
                            .map(|_| Peer::new(kind.clone(), None).map(Peer::bound))
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(|e| setup(&kind.to_string(), e.to_string()))
                    };
                    run(corpus, cfg, peers()?, peers()?)
                }
            };
            progress(i + 1);
            report
        })
        .collect()
}

/// Runs the sweep over `loaded` (the corpus called `corpus` in the report)
/// and gives the whole report `cannery zswap-sim` prints: the codec's mode
/// as reports name it, its table, format and level, the plan and one run
/// per batch size, then the same for each peer of `plan.beside`.
/// `progress` hears how many runs are done (of [`Sweep::run_count`]).
pub fn simulate(
    corpus: &str,
    loaded: ReplayCorpus,
    codec: &SweepCodec,
    plan: &Sweep,
    progress: &mut dyn FnMut(usize),
) -> Result<Report, Error> {
    let runs = sweep(&loaded.data, codec, plan, progress)?;
    let mut beside = Vec::with_capacity(plan.beside.len());
    for (k, kind) in plan.beside.iter().enumerate() {
        let before = (k + 1) * plan.batches.len();
        let peer = SweepCodec::Peer(kind.clone());
        let runs = sweep(&loaded.data, &peer, plan, &mut |done| {
            progress(before + done)
        })?;
        beside.push(BesideReport {
            mode: kind.to_string(),
            runs,
        });
    }
    let (mode, table, format, level) = match codec {
        SweepCodec::Peer(kind) => (kind.to_string(), None, None, None),
        SweepCodec::Cannery {
            mode,
            format,
            level,
            table,
        } => {
            let name = table
                .as_ref()
                .map(|t| t.name.clone().unwrap_or_else(|| t.id()));
            let key = match (mode, &name) {
                (Mode::Canned, Some(n)) => ModeKey::table_at(n.clone(), *level),
                (Mode::Dynamic, _) => ModeKey::Dynamic(*level),
                _ => ModeKey::Fixed,
            };
            let format = (*mode == Mode::Canned).then(|| format.to_string());
            (key.to_string(), name, format, Some(level.to_string()))
        }
    };
    Ok(Report {
        corpus: corpus.to_string(),
        workloads: loaded.workloads,
        files: loaded.files,
        pages: loaded.data.len() / PAGE_SIZE,
        omitted_same_filled_pages: loaded.omitted_same_filled,
        mode,
        table,
        format,
        level,
        folio: plan.folio.name().to_string(),
        workers: plan.workers,
        policy: plan.policy.name().to_string(),
        pool_model: POOL_MODEL.to_string(),
        latency: LATENCY.to_string(),
        runs,
        beside,
    })
}
