//! `cannery backends`: which compression engines this build and machine
//! offer, what each can do, and why a missing one is missing
//! (`cannery_engines::backend::survey`, rendered by `cannery_lab::engine_reports::render_survey`).

use clap::Args;

use cannery_engines::backend;

/// Arguments of `cannery backends`.
#[derive(Args)]
pub struct BackendsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `cannery backends`.
pub fn run(args: BackendsArgs) -> anyhow::Result<()> {
    let survey = backend::survey();
    crate::cli::print_report(args.json, &survey, |r| {
        cannery_lab::engine_reports::render_survey(r)
    })?;
    Ok(())
}
