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

use anyhow::Context;

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

/// A count of at least 1 (`--max-pages`): 0 would measure nothing.
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>().map_err(|e| e.to_string())? {
        0 => Err("0 measures nothing; give at least 1".into()),
        n => Ok(n),
    }
}

/// An error and its causes on one line, `a: b: c`, each cause once: one
/// whose text the line already holds (an error that prints its source in
/// its own message) is not repeated. Control characters are escaped.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    escape_controls(&line).into_owned()
}

/// `text` with every control character but newline and tab (ESC, CR) and
/// every bidi control written as `\uXXXX` (also a valid JSON escape), so
/// a name from a file cannot drive the terminal. Every report and message
/// goes through it.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(bad) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// The exit status for a command's error: 1 for a [`Finding`], else 2.
pub fn exit_status(err: &anyhow::Error) -> i32 {
    if err.chain().any(|c| c.is::<Finding>()) {
        EXIT_FINDING
    } else {
        EXIT_ERROR
    }
}
use cannery_codec::Table;
use cannery_files::input::{read_limited, SMALL_FILE_LIMIT};
pub use cannery_files::output::Privacy;
use cannery_files::output::{write_file, Existing};

/// Writes `bytes` to standard output and flushes; a failure is an error
/// naming standard output.
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, bytes)
        .and_then(|()| std::io::Write::flush(&mut out))
        .context("cannot write to standard output")
}

/// Loads a table from a file (JSON or binary, at most 16 MiB), or a
/// built-in by name (`fixed`, `kernel-2024`) when no file of that name exists.
pub fn load_table(spec: &str) -> anyhow::Result<Table> {
    let path = Path::new(spec);
    // A name with nothing there (not even a dangling or looping link).
    if std::fs::symlink_metadata(path).is_err() {
        if let Some(t) = Table::builtin(spec) {
            return Ok(t);
        }
        anyhow::bail!(
            "table {spec:?}: no such file, and not a built-in table (built-ins: {})",
            Table::BUILTIN_NAMES.join(", ")
        );
    }
    let bytes = read_limited(path, SMALL_FILE_LIMIT, "table")?;
    Table::from_bytes(&bytes).with_context(|| format!("table {}", path.display()))
}

/// Writes a table atomically: JSON if the path ends in `.json`, else the
/// binary form; an existing file is kept unless `force`.
pub fn write_table(table: &Table, path: &Path, force: bool) -> anyhow::Result<()> {
    let bytes = if path.extension().is_some_and(|e| e == "json") {
        table.to_json().into_bytes()
    } else {
        table.to_binary()
    };
    write_file(path, &bytes, Existing::replace_if(force))
        .with_context(|| format!("writing table {}", path.display()))
}

/// Where a command's main output goes: standard output (`-`) or a file
/// written under a temporary name and put in place by [`Output::finish`]
/// (an existing file is kept unless `force`; the input is never the output).
pub enum Output {
    /// Standard output.
    Stdout(std::io::BufWriter<std::io::Stdout>),
    /// A file being written.
    File(std::io::BufWriter<cannery_files::output::AtomicFile>),
}

impl Output {
    /// Opens `path` (`-` for standard output) for a command reading `inputs`
    /// (checked here, before the work, and again at the commit).
    pub fn open(
        path: &Path,
        force: bool,
        inputs: &[&Path],
        privacy: Privacy,
    ) -> anyhow::Result<Output> {
        if path == Path::new("-") {
            return Ok(Output::Stdout(std::io::BufWriter::new(std::io::stdout())));
        }
        cannery_files::output::refuse_same_file(inputs, path)?;
        let existing = Existing::replace_if(force);
        let f = cannery_files::output::AtomicFile::create_with(path, existing, privacy)?;
        Ok(Output::File(std::io::BufWriter::new(f)))
    }

    /// Flushes, and puts a file at its path.
    pub fn finish(self) -> anyhow::Result<()> {
        match self {
            Output::Stdout(mut w) => {
                std::io::Write::flush(&mut w).context("cannot write to standard output")
            }
            Output::File(w) => {
                let f = w.into_inner().map_err(|e| e.into_error())?;
                let path = f.path().to_path_buf();
                f.commit()
                    .with_context(|| format!("writing {}", path.display()))
            }
        }
    }
}

impl std::io::Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File(w) => w.flush(),
        }
    }
}
