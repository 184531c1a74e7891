//! `cannery zswap-sim`: replays a corpus of 4 KiB pages the way zswap
//! stores and loads them and reports the pool size, the effective ratio,
//! rejected pages and per-page store/load latency percentiles for each batch
//! size of a sweep. The model and the replay engine are `cannery_zswap`
//! (its crate doc says what is and is not modelled); this file only parses
//! arguments, reads the corpus and the table, names the codec (cannery's
//! encoder and decoder, or a peer) and the plan, calls
//! `cannery_zswap::simulate` (one run per batch size and the report), and
//! prints the report as text or JSON.
//!
//! The corpus is read with `cannery_capture::corpus` (snapshots or raw
//! `.pages` files); pages the capture left out as zero or same-filled are
//! counted in the report but not replayed.
//!
//! Every loaded page is compared with the original; mismatches are counted
//! and reported, and make the command fail.

use std::path::PathBuf;

use anyhow::{bail, Context};
use cannery_codec::{Format, Level, Mode};
use cannery_engines::peer::PeerKind;
use cannery_zswap::{
    default_workers, simulate, FolioSize, Policy, ReplayCorpus, Sweep, SweepCodec, SWEEP,
};
use clap::{Args, ValueEnum};

/// Arguments of `cannery zswap-sim`.
#[derive(Args, Debug)]
pub struct ZswapSimArgs {
    /// A corpus: a snapshot or raw `.pages` file, or a directory with one
    /// sub-directory per workload (all workloads are replayed in order).
    #[arg(long)]
    corpus: PathBuf,
    /// Canned table: a built-in name (kernel-2024, fixed) or a table file
    /// (JSON or binary). Required for canned mode, ignored otherwise.
    #[arg(long)]
    table: Option<String>,
    /// Compressor.
    #[arg(long, value_enum)]
    mode: SimMode,
    /// Canned stream format: iaa (no header) or deflate.
    #[arg(long, default_value = "iaa", value_parser = parse_format)]
    format: Format,
    /// LZ77 level of cannery's own modes: fast, default or best.
    #[arg(long, default_value = "fast", value_parser = parse_level)]
    level: Level,
    /// zstd level in zstd mode (the kernel's crypto zstd uses 3).
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    /// Folio size the corpus is cut into.
    #[arg(long, value_enum, default_value = "64k")]
    folio: FolioArg,
    /// Pages per compression batch (1..=32); without it, sweep 1, 2, 4, 8, 16, 32.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=32))]
    compress_batch: Option<u16>,
    /// Pages per decompression batch (1..=32); default: the compression batch.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=32))]
    decompress_batch: Option<u16>,
    /// Parallel engines (the calling thread plus worker threads); default:
    /// the number of CPUs, at most 8.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    engines: Option<u16>,
    /// Reject a folio whose pages do not all compress (memcg writeback
    /// disabled) instead of storing such pages raw.
    #[arg(long)]
    reject_incompressible: bool,
    /// Use at most this many pages of each workload (its first ones).
    #[arg(long, value_parser = super::at_least_one)]
    max_pages: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

fn parse_level(s: &str) -> Result<Level, String> {
    s.parse()
}

/// The compressors the simulator can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SimMode {
    /// Canned Huffman table (needs --table).
    Canned,
    /// RFC 1951 fixed codes.
    Fixed,
    /// Per-page dynamic Huffman codes.
    Dynamic,
    /// zstd (libzstd) at --zstd-level.
    Zstd,
    /// LZ4 block format (liblz4).
    Lz4,
    /// The kernel crypto API's deflate as zswap runs it (raw, 2 KiB window,
    /// level 6, memory level 8); `cannery zswap-kernel --compare-sim`
    /// measures how close it comes to the real one.
    KernelDeflate,
    /// The kernel's lzo (LZO1X-1); needs a build with `--features lzo`.
    KernelLzo,
}

/// Folio sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FolioArg {
    /// 4 KiB (one page).
    #[value(name = "4k")]
    K4,
    /// 16 KiB.
    #[value(name = "16k")]
    K16,
    /// 32 KiB.
    #[value(name = "32k")]
    K32,
    /// 64 KiB.
    #[value(name = "64k")]
    K64,
    /// Repeating 64k, 4k, 32k, 16k.
    Mixed,
}

impl From<FolioArg> for FolioSize {
    fn from(f: FolioArg) -> FolioSize {
        match f {
            FolioArg::K4 => FolioSize::K4,
            FolioArg::K16 => FolioSize::K16,
            FolioArg::K32 => FolioSize::K32,
            FolioArg::K64 => FolioSize::K64,
            FolioArg::Mixed => FolioSize::Mixed,
        }
    }
}

/// Runs `cannery zswap-sim`.
pub fn zswap_sim(args: ZswapSimArgs) -> anyhow::Result<()> {
    let loaded = ReplayCorpus::load(&args.corpus, args.max_pages)
        .with_context(|| format!("cannot read corpus {}", args.corpus.display()))?;
    let table = match (args.mode, &args.table) {
        (SimMode::Canned, Some(spec)) => Some(Box::new(super::load_table(spec)?)),
        (SimMode::Canned, None) => bail!("canned mode needs --table (a built-in name or a file)"),
        _ => None,
    };
    let cannery = |mode, format| SweepCodec::Cannery {
        mode,
        format,
        level: args.level,
        table: table.clone(),
    };
    let codec = match args.mode {
        SimMode::Canned => cannery(Mode::Canned, args.format),
        SimMode::Fixed => cannery(Mode::Fixed, Format::Deflate),
        SimMode::Dynamic => cannery(Mode::Dynamic, Format::Deflate),
        SimMode::Zstd => SweepCodec::Peer(PeerKind::Zstd(args.zstd_level)),
        SimMode::Lz4 => SweepCodec::Peer(PeerKind::Lz4),
        SimMode::KernelDeflate => SweepCodec::Peer(PeerKind::KernelDeflate),
        SimMode::KernelLzo => SweepCodec::Peer(PeerKind::KernelLzo),
    };
    let plan = Sweep {
        batches: args
            .compress_batch
            .map_or(SWEEP.to_vec(), |b| vec![b as usize]),
        decompress_batch: args.decompress_batch.map(|d| d as usize),
        folio: args.folio.into(),
        policy: if args.reject_incompressible {
            Policy::Reject
        } else {
            Policy::StoreRaw
        },
        workers: args.engines.map_or_else(default_workers, |e| e as usize),
        unstored_same_filled: loaded.unstored_same_filled,
    };
    let bar = crate::cli::out::bar(plan.batches.len() as u64, "zswap-sim", "runs");
    let name = args.corpus.display().to_string();
    let report = simulate(&name, loaded, &codec, &plan, &mut |done| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    let mismatches = report.mismatches();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{report}")?;
    }
    if mismatches > 0 {
        return Err(super::finding(format!(
            "{mismatches} loaded pages differ from the originals"
        )));
    }
    Ok(())
}
