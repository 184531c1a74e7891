//! `cannery restore`: undoes what a machine-changing run (`zswap-kernel
//! --setup`, `capture --cold`, `zram-kernel`) left behind when it was
//! killed outright, from its journal (`cannery_machine::restore_stale`).

use anyhow::bail;
use cannery_cli::restore::RestoreArgs;
use cannery_machine::{restore_stale, System};

/// Runs `cannery restore`.
pub fn run(args: RestoreArgs) -> anyhow::Result<()> {
    let done = restore_stale(&System::default())?;
    crate::cli::print_report(args.json, &done, |r| r.render_text())?;
    if !done.failed.is_empty() {
        bail!(
            "not restored (kept in the journal; fix and run `cannery restore` again):\n  {}",
            done.failed.join("\n  ")
        );
    }
    Ok(())
}
