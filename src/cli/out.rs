//! What the CLI says on stderr besides errors: status lines, warnings,
//! verbose detail and progress bars, decided in one place from `-q`/`-v`
//! and whether stderr is a terminal. Reports go to stdout and are not
//! handled here; errors are printed by `main` whatever the level.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

/// How much is said: 0 with `-q`, 1 by default, 2 with `-v`.
static LEVEL: AtomicU8 = AtomicU8::new(1);

/// Sets the level from the global flags (`-q` wins over `-v`).
pub fn set_level(quiet: bool, verbose: bool) {
    let level = if quiet {
        0
    } else if verbose {
        2
    } else {
        1
    };
    LEVEL.store(level, Ordering::Relaxed);
}

/// True with `-q`.
pub fn quiet() -> bool {
    LEVEL.load(Ordering::Relaxed) == 0
}

/// True with `-v`.
pub fn verbose() -> bool {
    LEVEL.load(Ordering::Relaxed) >= 2
}

/// A status line (`cannery: …`), unless `-q`.
pub fn status(message: impl std::fmt::Display) {
    if !quiet() {
        eprintln!(
            "cannery: {message}",
            message = super::escape_controls(&message.to_string())
        );
    }
}

/// A warning (`cannery: warning: …`), unless `-q`.
pub fn warn(message: impl std::fmt::Display) {
    if !quiet() {
        eprintln!(
            "cannery: warning: {message}",
            message = super::escape_controls(&message.to_string())
        );
    }
}

/// Detail shown only with `-v`.
pub fn detail(message: impl std::fmt::Display) {
    if verbose() {
        eprintln!(
            "cannery: {message}",
            message = super::escape_controls(&message.to_string())
        );
    }
}

/// How far a long raw page read got, on a terminal unless `-q` (the hook
/// of `cannery_capture::corpus::set_read_progress`).
pub fn read_progress(path: &std::path::Path, done: u64, total: u64) {
    if progress_shown() {
        let pct = done as f64 * 100.0 / total.max(1) as f64;
        let name = super::escape_controls(&path.display().to_string()).into_owned();
        eprintln!("cannery: reading {name}: page {done} of {total} ({pct:.0} %)");
    }
}

/// True when progress is drawn: stderr is a terminal and not `-q`.
pub fn progress_shown() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

/// A progress bar of `len` steps named `what`, with rate and time left;
/// hidden (every call a no-op) unless [`progress_shown`].
pub fn bar(len: u64, what: &str, unit: &str) -> ProgressBar {
    if !progress_shown() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
        .with_finish(ProgressFinish::AndClear);
    let template = format!(
        "{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} \
         ({{per_sec}}, {{eta}} left) {{msg}}"
    );
    bar.set_style(
        ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
