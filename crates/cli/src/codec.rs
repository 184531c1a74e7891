//! Arguments of `cannery compress` and `cannery decompress`.

use cannery_codec::{Format, Level, Mode};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery compress`.
#[derive(Args)]
pub struct CompressArgs {
    /// Table for canned mode: a file (JSON or binary) or a built-in name (kernel-2024).
    #[arg(long)]
    pub table: Option<String>,
    /// canned, fixed or dynamic.
    #[arg(long)]
    pub mode: Mode,
    /// Canned framing: iaa (no header; the default) or deflate (header +
    /// body, standard raw deflate). Fixed and dynamic streams are deflate.
    #[arg(long)]
    pub format: Option<Format>,
    /// Match finding effort: fast, default or best.
    #[arg(long, default_value = "fast")]
    pub level: Level,
    /// Input: raw pages (a `.pages` file, a pipe, or `-` for standard
    /// input; whole 4096-byte pages) or a snapshot.
    #[arg(long = "in", short = 'i')]
    pub input: PathBuf,
    /// Output form (only `records`: u32 LE length, then the bytes; 4096 = raw page).
    #[arg(long, default_value = "records", value_parser = ["records"])]
    pub emit: String,
    /// Output file (`-` for standard output; a new file unless --force).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `cannery decompress`.
#[derive(Args)]
pub struct DecompressArgs {
    /// Table for canned mode in iaa format: a file or a built-in name.
    #[arg(long)]
    pub table: Option<String>,
    /// canned, fixed or dynamic.
    #[arg(long)]
    pub mode: Mode,
    /// Canned framing: iaa or deflate.
    #[arg(long, default_value = "iaa")]
    pub format: Format,
    /// Input: records (a file, or `-` for standard input).
    #[arg(long = "in", short = 'i')]
    pub input: PathBuf,
    /// Allow each record to decode to any length up to N bytes (general
    /// data, at most 1 GiB); without it every record must decode to exactly
    /// one 4096-byte page. 4096-byte records are raw pages either way.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_output: Option<u64>,
    /// Output file: decoded bytes back to back (`-` for standard output; a
    /// new file unless --force).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    pub force: bool,
}
