//! Arguments of `cannery restore`.

use clap::Args;

/// Arguments of `cannery restore`.
#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,
}
