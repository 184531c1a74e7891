//! `cannery backends`: which compression engines this build and machine
//! offer, what each can do, and why a missing one is missing
//! (`cannery_engines::backend::survey`, rendered by `cannery_lab::engine_reports::render_survey`).

use cannery_cli::backends::BackendsArgs;
use cannery_engines::backend;

/// Runs `cannery backends`.
pub fn run(args: BackendsArgs) -> anyhow::Result<()> {
    let survey = backend::survey();
    crate::cli::print_report(args.json, &survey, |r| {
        cannery_lab::engine_reports::render_survey(r)
    })?;
    Ok(())
}
