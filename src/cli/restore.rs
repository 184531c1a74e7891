//! `cannery restore`: undoes what a machine-changing run (`zswap-kernel
//! --setup`, `capture --cold`, `zram-kernel`) left behind when it was
//! killed outright, from its journal (`cannery_machine::restore_stale`).

use std::io::Write;

use anyhow::bail;
use cannery_machine::{restore_stale, System};
use clap::Args;

/// Arguments of `cannery restore`.
#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `cannery restore`.
pub fn run(args: RestoreArgs) -> anyhow::Result<()> {
    let done = restore_stale(&System::default())?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &done)?;
        writeln!(out)?;
    } else if let Some(r) = &done.record {
        let boot = if done.earlier_boot {
            ", from an earlier boot"
        } else {
            ""
        };
        writeln!(
            out,
            "restored what `cannery {}` (pid {}) left{boot}:",
            r.command, r.pid
        )?;
        for line in &done.undone {
            writeln!(out, "  {line}")?;
        }
    } else {
        writeln!(
            out,
            "nothing to restore: no cannery journal on this machine"
        )?;
    }
    if !done.failed.is_empty() {
        bail!(
            "not restored (kept in the journal; fix and run `cannery restore` again):\n  {}",
            done.failed.join("\n  ")
        );
    }
    Ok(())
}
