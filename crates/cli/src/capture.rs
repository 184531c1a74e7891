//! Arguments of `cannery capture`.

use cannery_capture::{cold, session};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// Extra mapping kinds to include.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Include {
    /// Copy-on-write (written) pages of private file mappings.
    FilePrivate,
}

/// Arguments of `cannery capture`.
#[derive(Args, Debug)]
#[command(after_help = "\
Snapshots contain raw process memory and so whatever secrets the process held. \
Spawn mode starts CMD with an empty environment plus only --env variables; after the \
last sample a still-running workload gets SIGTERM (its process group), then SIGKILL \
2 s later, unless --wait-exit. Run `cannery corpus scan-secrets` before sharing.")]
pub struct CaptureArgs {
    /// Attach to this running process instead of starting a command.
    #[arg(long, conflicts_with = "command")]
    pub pid: Option<u32>,
    /// Output snapshot file (written when the capture ends; an existing
    /// file is kept unless --force).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Workload label stored in the snapshot (default: the command name).
    #[arg(long)]
    pub label: Option<String>,
    /// Environment variable for the workload (repeatable); nothing else is passed.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// Working directory of the workload.
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Append the workload's stdout and stderr to this file (default: our
    /// stderr); created 0600 if new, opened only once the capture can start
    /// (a refused capture leaves it untouched).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Number of samples (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Time between samples (and before the first, in spawn mode): 500ms, 2s, 1m.
    #[arg(long, default_value = "1s", value_parser = session::parse_duration)]
    pub interval: Duration,
    /// After the last sample, let the workload finish instead of stopping it.
    #[arg(long)]
    pub wait_exit: bool,
    /// Also capture every descendant process at each sample.
    #[arg(long)]
    pub children: bool,
    /// Extra mapping kinds to include.
    #[arg(long, value_enum)]
    pub include: Vec<Include>,
    /// Stop each process (ptrace) while it is captured, for a consistent sample.
    #[arg(long)]
    pub freeze: bool,
    /// With --freeze, release a process after this pause even if not fully read.
    #[arg(long, default_value = "500ms", value_parser = session::parse_duration)]
    pub max_pause: Duration,
    /// Cold pages only: before each sample, mark the target's pages idle,
    /// wait this long (e.g. 30s, 2m), and capture only the pages nothing
    /// touched meanwhile (the kernel's idle page tracking,
    /// /sys/kernel/mm/page_idle; needs root). The snapshot records the hot
    /// and cold counts (`cannery corpus info`).
    #[arg(long, value_parser = session::parse_duration, conflicts_with = "cold")]
    pub cold_after: Option<Duration>,
    /// Cold pages as the kernel's own reclaim picks them: reclaim:50% or
    /// reclaim:256M of the workload's anonymous memory per cycle (--count),
    /// one --interval after it starts, in a temporary memory cgroup of its
    /// own, and capture exactly the pages swapped out (needs root, swap and
    /// a memory cgroup; zswap recommended). With --pid: cgroup v2 only, see
    /// --reclaim-own-cgroup.
    #[arg(long, value_name = "reclaim:AMOUNT", value_parser = cold::Amount::parse)]
    pub cold: Option<cold::Amount>,
    /// With --cold: make a temporary swap file when swap is short and
    /// enable zswap; all undone afterwards.
    #[arg(long, requires = "cold")]
    pub setup: bool,
    /// Where --setup makes its swap file (must not exist).
    #[arg(long, requires = "setup")]
    pub swap_file: Option<PathBuf>,
    /// With --cold: also write the pages still resident after each step to
    /// this snapshot (label NAME.hot), from the same moment as the cold ones.
    #[arg(long, value_name = "HOT", requires = "cold")]
    pub keep_hot: Option<PathBuf>,
    /// With --cold --pid on cgroup v2: reclaim in the cgroup the process
    /// lives in. This reclaims from EVERY process in that cgroup.
    #[arg(long, requires = "pid")]
    pub reclaim_own_cgroup: bool,
    /// Store identical pages once (duplicates are counted).
    #[arg(long)]
    pub dedup: bool,
    /// Store at most N pages in the file (uniform random sample, split over samples).
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,
    /// Keep each candidate page with this probability (0..=1).
    #[arg(long, value_name = "RATE", default_value_t = 1.0)]
    pub sample: f64,
    /// Seed of the sampling generator (SplitMix64).
    #[arg(long, default_value_t = cannery_capture::capture::DEFAULT_SEED)]
    pub seed: u64,
    /// Drop pages that contain secret-looking strings (counted as redacted).
    #[arg(long)]
    pub redact_secrets: bool,
    /// zstd level of the snapshot (1..=22).
    #[arg(long, default_value_t = cannery_capture::snapshot::writer::DEFAULT_LEVEL,
          value_parser = clap::value_parser!(i32).range(1..=22))]
    pub level: i32,
    /// Print the final snapshot header as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// The workload command and its arguments (spawn mode).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `--env K=V`.
pub fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected K=V, got {s:?}")),
    }
}
