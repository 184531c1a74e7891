//! Arguments of `cannery completions` and `cannery man`.

use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// Arguments of `cannery man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write one page per command (`cannery.1`, `cannery-train.1`, …) into
    /// this directory instead of printing the main page.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Replace pages that exist.
    #[arg(short, long)]
    pub force: bool,
}
