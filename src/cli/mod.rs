//! Subcommand modules of the `cannery` CLI, one per group, plus the few
//! helpers they share (loading and writing tables, opening a command's
//! output).

/// `print!` to standard output that returns an error (exit 2) instead of
/// panicking when the write fails (a full disk, `> /dev/full`).
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::write_stdout($crate::cli::escape_controls(&format!($($arg)*)).as_bytes()) };
}

/// `println!` as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::write_stdout($crate::cli::escape_controls(&format!("{}\n", format_args!($($arg)*))).as_bytes()) };
}

pub mod backends;
pub mod bench;
pub mod capture;
pub mod codec;
pub mod corpus;
pub mod export;
pub mod fuzz;
pub mod out;
pub mod restore;
pub mod table;
pub mod train;
pub mod validate;
pub mod version;
pub mod zram_kernel;
pub mod zswap_kernel;
pub mod zswap_sim;

use std::path::Path;

/// Exit status of a command that ran and found something (a failed check,
/// differing pages, a secret); see [`exit_status`].
pub const EXIT_FINDING: i32 = 1;
/// Exit status of a command that could not do its job (usage, input, I/O).
pub const EXIT_ERROR: i32 = 2;

/// A command's finding: it ran to the end and what it checked failed.
/// Returned as the error of such commands, it makes the exit status 1;
/// every other error is 2.
#[derive(Debug)]
pub struct Finding(pub String);

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

/// A finding as an error (exit status 1).
pub fn finding(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Finding(message.into()))
}

pub use cannery_files::message::escape_controls;

/// An error and its causes on one line ([`cannery_files::message::error_line`]).
pub fn error_text(err: &anyhow::Error) -> String {
    cannery_files::message::error_line(err.as_ref())
}

/// The exit status for a command's error: 1 for a [`Finding`], else 2.
pub fn exit_status(err: &anyhow::Error) -> i32 {
    if err.chain().any(|c| c.is::<Finding>()) {
        EXIT_FINDING
    } else {
        EXIT_ERROR
    }
}
pub use cannery_files::output::Privacy;
pub use cannery_files::sink::{write_stdout, Sink as Output};

/// Opens a command's main output ([`Output`]): `-` is standard output; an
/// existing file is kept unless `force`; none of `inputs` is replaced.
pub fn open_output(
    path: &Path,
    force: bool,
    inputs: &[&Path],
    p: Privacy,
) -> anyhow::Result<Output> {
    let existing = cannery_files::Existing::replace_if(force);
    Ok(Output::open(path, existing, inputs, p)?)
}

/// Prints a command's report on standard output: pretty JSON with
/// `--json`, else its text.
pub fn print_report<T: serde::Serialize>(
    json: bool,
    report: &T,
    text: impl FnOnce(&T) -> String,
) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(report)?)?;
    } else {
        out!("{}", text(report))?;
    }
    Ok(())
}

/// Loads a table argument: a file, or a built-in by name ([`cannery_lab::table_file::load`]).
pub fn load_table(spec: &str) -> anyhow::Result<cannery_codec::Table> {
    Ok(cannery_lab::table_file::load(spec)?)
}

/// Writes a table by its extension; an existing file is kept unless `force`.
pub fn write_table(table: &cannery_codec::Table, path: &Path, force: bool) -> anyhow::Result<()> {
    let existing = cannery_files::output::Existing::replace_if(force);
    Ok(cannery_lab::table_file::write(table, path, existing)?)
}
