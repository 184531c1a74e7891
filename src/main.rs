//! The `cannery` command line: the global flags, dispatch, and the exit
//! status.
//!
//! Each subcommand's arguments are declared in `cannery-cli`
//! (`crates/cli`); each group's glue (opening outputs, progress, printing)
//! lives in its own module under `cli/`; the work itself is done by the
//! library crates.

#![forbid(unsafe_code)]

mod cli;

use clap::{Parser, Subcommand};

/// Canned-Huffman table trainer and deflate codec toolkit for Linux memory compression.
///
/// Reports go to standard output; status, warnings and progress bars (on a
/// terminal) to standard error. Exit status: 0 success; 1 a finding (a
/// failed check in validate or fuzz, a secret found by corpus
/// scan-secrets, pages that came back different in zswap-sim,
/// zswap-kernel or zram-kernel); 2 an error (usage, input, I/O, a refused output); 130
/// interrupted.
#[derive(Parser)]
#[command(name = "cannery", version = cli::version::VERSION, long_version = cli::version::LONG_VERSION, about, long_about, propagate_version = true)]
struct Cli {
    /// Say nothing on stderr but errors: no status lines, warnings or progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Say more on stderr (each step of long commands).
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Corpus readers: skip a page file or workload directory inside a
    /// corpus directory that cannot be read, with a warning and a count
    /// (without it, such a file is an error naming it).
    #[arg(long, global = true)]
    skip_unreadable: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show, import and write tables.
    #[command(subcommand)]
    Table(cannery_cli::table::TableCommand),
    /// Compress a file of 4 KiB pages into records.
    Compress(cannery_cli::codec::CompressArgs),
    /// Decompress records back into pages.
    Decompress(cannery_cli::codec::DecompressArgs),
    /// Write a table for the kernel iaa_crypto driver, QPL or ISA-L.
    #[command(subcommand)]
    Export(cannery_cli::export::ExportCommand),
    /// Train per-workload and fleet canned tables on a corpus (or from histograms) and report held-out ratios.
    Train(Box<cannery_cli::train::TrainArgs>),
    /// Gather symbol statistics (a histogram file) from a corpus or a live process.
    Stats(cannery_cli::stats::StatsArgs),
    /// Merge histogram files.
    Merge(cannery_cli::stats::MergeArgs),
    /// Evaluate one table on a corpus: ratios against every codec, and drift.
    Eval(cannery_cli::eval::EvalArgs),
    /// Capture resident anonymous memory pages of a process or workload into a snapshot.
    Capture(Box<cannery_cli::capture::CaptureArgs>),
    /// Inspect corpora: info, scan-secrets.
    #[command(subcommand)]
    Corpus(cannery_cli::corpus::CorpusCommand),
    /// List compression backends, what they can do, and why missing ones are missing.
    Backends(cannery_cli::backends::BackendsArgs),
    /// Check a table and its streams on every available backend pair.
    Validate(cannery_cli::validate::ValidateArgs),
    /// Decompression-equivalence fuzzing of one backend against the others.
    Fuzz(cannery_cli::fuzz::FuzzArgs),
    /// Replay a corpus as zswap stores and loads it, through the batch path.
    ZswapSim(cannery_cli::zswap_sim::ZswapSimArgs),
    /// Measure the running kernel's zswap on a corpus (needs root), beside the simulator.
    ZswapKernel(cannery_cli::zswap_kernel::ZswapKernelArgs),
    /// Measure the running kernel's zram on a corpus (needs root): each compressor, with and without the workload's dictionary.
    ZramKernel(cannery_cli::zram_kernel::ZramKernelArgs),
    /// Undo what a killed machine-changing run left (swap files, zswap settings, cgroups, zram devices), from its journal.
    Restore(cannery_cli::restore::RestoreArgs),
    /// Per-page speed and ratio of every mode and peer compressor on a corpus (markdown or JSON).
    Bench(cannery_cli::bench::BenchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cannery_cli::version::CompletionsArgs),
    /// Print the manual page (roff), e.g. `cannery man | man -l -`.
    Man(cannery_cli::version::ManArgs),
}

fn main() {
    // A closed stdout (`cannery train ... | head -1`) ends the process
    // quietly instead of a panic in println!.
    cannery_files::interrupt::default_sigpipe();
    // Ctrl-C and SIGTERM remove partial files (the one shared handler).
    cannery_files::interrupt::install_cleanup();
    // No command replaces a file it read, under any name.
    cannery_files::input::guard_inputs();
    let cli = Cli::parse();
    cli::out::set_level(cli.quiet, cli.verbose);
    cannery_capture::corpus::set_skip_unreadable(cli.skip_unreadable);
    cannery_capture::corpus::set_read_progress(cli::out::read_progress);
    let result = match cli.command {
        Command::Table(cmd) => cli::table::run(cmd),
        Command::Bench(args) => cli::bench::run(args),
        Command::Compress(args) => cli::codec::compress(args),
        Command::Decompress(args) => cli::codec::decompress(args),
        Command::Export(cmd) => cli::export::run(cmd),
        Command::Train(args) => cli::train::train(*args),
        Command::Stats(args) => cli::train::stats::stats(args),
        Command::Merge(args) => cli::train::stats::merge(args),
        Command::Eval(args) => cli::train::eval::eval(args),
        Command::Capture(args) => cli::capture::run(*args),
        Command::Corpus(cmd) => cli::corpus::run(cmd),
        Command::Backends(args) => cli::backends::run(args),
        Command::Validate(args) => cli::validate::run(args),
        Command::Fuzz(args) => cli::fuzz::run(args),
        Command::ZswapSim(args) => cli::zswap_sim::zswap_sim(args),
        Command::ZswapKernel(args) => cli::zswap_kernel::run(args),
        Command::ZramKernel(args) => cli::zram_kernel::run(args),
        Command::Restore(args) => cli::restore::run(args),
        Command::Completions(args) => cli::version::completions::<Cli>(args),
        Command::Man(args) => cli::version::man::<Cli>(args),
    };
    // One rule for every corpus reader: hidden and partial files are not
    // read, and are counted here (so are unreadable ones skipped).
    for line in cannery_capture::corpus::skipped_warnings() {
        cli::out::warn(line);
    }
    if let Err(err) = result {
        // Outputs are never replaced silently; say how to replace one.
        let exists = err.chain().any(|c| {
            c.downcast_ref::<cannery_files::Error>()
                .is_some_and(|e| e.kind() == cannery_files::ErrorKind::AlreadyExists)
                || c.downcast_ref::<cannery_capture::Error>()
                    .is_some_and(|e| e.kind() == cannery_capture::ErrorKind::AlreadyExists)
        });
        let hint = if exists {
            " (pass -f/--force to replace it)"
        } else {
            ""
        };
        eprintln!("cannery: {}{hint}", cli::error_text(&err));
        std::process::exit(cli::exit_status(&err));
    }
}
