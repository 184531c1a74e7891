//! `cannery zswap-sim`: replays a corpus of 4 KiB pages the way zswap
//! stores and loads them and reports the pool size, the effective ratio,
//! rejected pages and per-page store/load latency percentiles for each batch
//! size of a sweep. The model and the replay engine are `cannery_zswap`
//! (its crate doc says what is and is not modelled); this file only takes its parsed
//! arguments (`cannery_cli`), reads the corpus and the table, names the codec (cannery's
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

use anyhow::{bail, Context};
use cannery_cli::zswap_sim::{SimMode, ZswapSimArgs};
use cannery_codec::{Format, Mode};
use cannery_engines::peer::PeerKind;
use cannery_zswap::{default_workers, simulate, Policy, ReplayCorpus, Sweep, SweepCodec, SWEEP};

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
        folio: args.folio,
        policy: if args.reject_incompressible {
            Policy::Reject
        } else {
            Policy::StoreRaw
        },
        workers: args.engines.map_or_else(default_workers, |e| e as usize),
        unstored_same_filled: loaded.unstored_same_filled,
        beside: (args.beside.iter().map(|p| p.parse::<PeerKind>()))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow::anyhow!("--beside: {e}"))?,
    };
    let bar = crate::cli::out::bar(plan.run_count() as u64, "zswap-sim", "runs");
    let name = args.corpus.display().to_string();
    let report = simulate(&name, loaded, &codec, &plan, &mut |done| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    let mismatches = report.mismatches();
    crate::cli::print_report(args.json, &report, |r| r.to_string())?;
    if mismatches > 0 {
        return Err(super::finding(format!(
            "{mismatches} loaded pages differ from the originals"
        )));
    }
    Ok(())
}
