//! Arguments of `cannery zswap-sim`.

use cannery_codec::{Format, Level};
use cannery_zswap::FolioSize;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Arguments of `cannery zswap-sim`.
#[derive(Args, Debug)]
pub struct ZswapSimArgs {
    /// A corpus: a snapshot or raw `.pages` file, or a directory with one
    /// sub-directory per workload (all workloads are replayed in order).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Canned table: a built-in name (kernel-2024, fixed) or a table file
    /// (JSON or binary). Required for canned mode, ignored otherwise.
    #[arg(long)]
    pub table: Option<String>,
    /// Compressor.
    #[arg(long, value_enum)]
    pub mode: SimMode,
    /// Canned stream format: iaa (no header) or deflate.
    #[arg(long, default_value = "iaa")]
    pub format: Format,
    /// LZ77 level of cannery's own modes: fast, default or best.
    #[arg(long, default_value = "fast")]
    pub level: Level,
    /// zstd level in zstd mode (the kernel's crypto zstd uses 3).
    #[arg(long, default_value_t = 3)]
    pub zstd_level: i32,
    /// Folio size the corpus is cut into: 4k, 16k, 32k, 64k or mixed
    /// (repeating 64k, 4k, 32k, 16k).
    #[arg(long, default_value = "64k", value_parser = folio_parser())]
    pub folio: FolioSize,
    /// Pages per compression batch (1..=32); without it, sweep 1, 2, 4, 8, 16, 32.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub compress_batch: Option<u16>,
    /// Pages per decompression batch (1..=32); default: the compression batch.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub decompress_batch: Option<u16>,
    /// Parallel engines (the calling thread plus worker threads); default:
    /// the number of CPUs, at most 8.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub engines: Option<u16>,
    /// Reject a folio whose pages do not all compress (memcg writeback
    /// disabled) instead of storing such pages raw.
    #[arg(long)]
    pub reject_incompressible: bool,
    /// Use at most this many pages of each workload (its first ones).
    #[arg(long, value_parser = crate::common::at_least_one)]
    pub max_pages: Option<usize>,
    /// Also replay these peers with the same plan, each reported beside
    /// the codec: e.g. `--beside lz4 zstd-1` (names as `bench` reports
    /// them: zstd-N, lz4, lz4-flex, libdeflate-N, zlib-N, miniz-N,
    /// kernel-deflate, kernel-lzo).
    #[arg(long, num_args = 1.., value_name = "PEER")]
    pub beside: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
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

/// `--folio`: one of [`FolioSize::NAMES`].
pub fn folio_parser() -> impl clap::builder::TypedValueParser<Value = FolioSize> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(FolioSize::NAMES)
        .map(|s| FolioSize::from_name(&s).expect("a possible value"))
}
