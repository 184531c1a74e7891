//! Arguments of `cannery backends`.

use clap::Args;

/// Arguments of `cannery backends`.
#[derive(Args)]
pub struct BackendsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
