//! `cannery backends`: which compression engines this build and machine
//! offer, what each can do, and why a missing one is missing.

use clap::Args;

use cannery_codec::backend;

/// Arguments of `cannery backends`.
#[derive(Args)]
pub struct BackendsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn modes(m: &[cannery_codec::Mode]) -> String {
    if m.is_empty() {
        "-".into()
    } else {
        m.iter().map(|m| m.name()).collect::<Vec<_>>().join(",")
    }
}

/// Runs `cannery backends`.
pub fn run(args: BackendsArgs) -> anyhow::Result<()> {
    let survey = backend::survey();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&survey)?);
        return Ok(());
    }
    println!(
        "{:<12} {:<10} {:<22} {:<22} {:<9}",
        "backend", "status", "compresses", "decompresses", "path"
    );
    for a in &survey {
        match &a.capabilities {
            Some(c) => {
                println!(
                    "{:<12} {:<10} {:<22} {:<22} {:<9}",
                    a.name,
                    "available",
                    modes(&c.compress),
                    modes(&c.decompress),
                    c.path.name()
                );
                if let Some(n) = &c.path_note {
                    println!("{:<12} note: {n}", "");
                }
            }
            None => {
                println!("{:<12} {:<10}", a.name, "missing");
                if let Some(r) = &a.reason {
                    println!("{:<12} why: {r}", "");
                }
            }
        }
        for d in &a.devices {
            println!("{:<12} device: {d}", "");
        }
    }
    Ok(())
}
