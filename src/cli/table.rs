//! `cannery table ...`: show a table, import one from raw lengths or a kernel
//! C header (parsed and cross-checked by `cannery_export::import`), or write
//! a built-in one.

use cannery_codec::table::rules::{BitBudget, Rule};
use std::path::PathBuf;

use anyhow::{bail, Context};
use cannery_codec::Table;
use clap::Subcommand;

use super::{load_table, write_table};

/// Table subcommands.
#[derive(Subcommand)]
pub enum TableCommand {
    /// Show a table: id, rules it meets, code-length profile (`--json` for machines).
    Show {
        /// Table file (JSON or binary) or built-in name (fixed, kernel-2024).
        table: String,
        /// Print JSON with `id`, `litlen_lengths` [286], `dist_lengths` [30], ...
        #[arg(long)]
        json: bool,
    },
    /// Import a table from another form.
    Import {
        /// Source form: `lengths` (316 raw bytes: 286 literal/length then 30
        /// distance lengths) or `kernel-header` (a C header with kernel-format
        /// arrays, ours or the 2024 patch's; codes, lengths and header are
        /// cross-checked).
        #[arg(long, value_parser = ["lengths", "kernel-header"])]
        from: String,
        /// The file to import.
        file: PathBuf,
        /// Output table (JSON if it ends in .json, else binary).
        #[arg(short, long)]
        out: PathBuf,
        /// Name to record in the table.
        #[arg(long)]
        name: Option<String>,
    },
    /// Write a built-in table (fixed or kernel-2024).
    Builtin {
        /// Which: fixed or kernel-2024.
        #[arg(value_parser = Table::BUILTIN_NAMES)]
        which: String,
        /// Output table (JSON if it ends in .json, else binary).
        #[arg(short, long)]
        out: PathBuf,
    },
}

pub fn run(cmd: TableCommand) -> anyhow::Result<()> {
    match cmd {
        TableCommand::Show { table, json } => show(&load_table(&table)?, json),
        TableCommand::Import {
            from,
            file,
            out,
            name,
        } => {
            let mut t = match from.as_str() {
                "kernel-header" => {
                    let text = std::fs::read_to_string(&file)
                        .with_context(|| format!("cannot read {}", file.display()))?;
                    let t = cannery_export::table_from_kernel_header(&text)
                        .with_context(|| format!("cannot import {}", file.display()))?;
                    eprintln!(
                        "imported table {} ({}) from {}",
                        t.id(),
                        t.name.as_deref().unwrap_or("unnamed"),
                        file.display()
                    );
                    t
                }
                _ => {
                    let bytes = std::fs::read(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    if bytes.len() != 316 {
                        bail!("{}: {} bytes; a lengths file is exactly 316 bytes (286 literal/length then 30 distance lengths)", file.display(), bytes.len());
                    }
                    let mut t = Table::from_lengths(&bytes[..286], &bytes[286..])
                        .with_context(|| format!("{}", file.display()))?;
                    t.provenance.source =
                        Some(format!("imported from raw lengths {}", file.display()));
                    eprintln!("table {} written to {}", t.id(), out.display());
                    t
                }
            };
            if name.is_some() {
                t.name = name;
            }
            write_table(&t, &out)
        }
        TableCommand::Builtin { which, out } => {
            let t = Table::builtin(&which).expect("clap checked the name");
            write_table(&t, &out)?;
            eprintln!("table {} ({which}) written to {}", t.id(), out.display());
            Ok(())
        }
    }
}

fn show(t: &Table, json: bool) -> anyhow::Result<()> {
    let violations: Vec<String> = t.iaa_violations().iter().map(|v| v.to_string()).collect();
    let (ll_kraft, d_kraft) = t.kraft();
    let l = t.lengths();
    if json {
        let v = serde_json::json!({
            "id": t.id(),
            "name": t.name,
            "litlen_lengths": l.litlen.to_vec(),
            "dist_lengths": l.dist.to_vec(),
            "header_bits": t.header().bits,
            "header_hex": t.header().bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            "gen_decomp_table_flags": t.header().gen_decomp_table_flags(),
            "kraft": { "litlen": ll_kraft, "dist": d_kraft, "complete": 32768 },
            "iaa_compatible": violations.is_empty(),
            "iaa_violations": violations,
            "standard_deflate_header": t.is_standard(),
            "bit_budget": BitBudget::of(l),
            "rules": Rule::ALL.iter().map(|r| serde_json::json!({
                "rule": r.name(),
                "ok": r.check(t).is_ok(),
                "detail": r.check(t).err(),
            })).collect::<Vec<_>>(),
            "provenance": t.provenance,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "table     {}{}",
        t.id(),
        t.name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default()
    );
    if let Some(s) = &t.provenance.source {
        println!("source    {s}");
    }
    if let Some(c) = &t.provenance.corpus {
        println!("corpus    {c}");
    }
    for (mode, r) in &t.provenance.ratios {
        println!("ratio     {mode}: {r:.3}");
    }
    println!(
        "header    {} bits ({} bytes), gen_decomp_table_flags {:#x}",
        t.header().bits,
        t.header().bytes.len(),
        t.header().gen_decomp_table_flags()
    );
    println!("kraft     literal/length {ll_kraft}/32768, distance {d_kraft}/32768");
    if violations.is_empty() {
        println!("IAA       ok: every rule for canned compression holds");
    } else {
        println!("IAA       {} rule(s) broken:", violations.len());
        for v in violations.iter().take(10) {
            println!("          - {v}");
        }
        if violations.len() > 10 {
            println!("          ... and {} more", violations.len() - 10);
        }
    }
    println!("budget    {} (QPL/ISA-L limit 56)", BitBudget::of(l));
    println!("rules");
    for r in Rule::ALL {
        match r.check(t) {
            Ok(()) => println!("  {:<13} ok", r.name()),
            Err(e) => println!("  {:<13} BROKEN: {e}", r.name()),
        }
    }
    println!("lengths   literal/length: {}", profile(&l.litlen));
    println!("          distance:       {}", profile(&l.dist));
    Ok(())
}

/// "len:count" pairs, e.g. `4:1 5:6 8:60`.
fn profile(lengths: &[u8]) -> String {
    let mut count = [0usize; 16];
    for &x in lengths {
        count[x as usize] += 1;
    }
    (0..16)
        .filter(|&i| count[i] > 0)
        .map(|i| format!("{i}:{}", count[i]))
        .collect::<Vec<_>>()
        .join(" ")
}
