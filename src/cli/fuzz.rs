//! `cannery fuzz`: decompression-equivalence fuzzing across backends.
//! Generates seeded stress pages (random, long runs, all 256 byte values,
//! near-incompressible, repeats at distances near 4096, words, and mutated
//! corpus pages), compresses each with every able backend, decompresses with
//! every able backend, and reports mismatches with reproducers. This is the
//! command a hardware owner runs to prove IAA/QAT equivalence.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use cannery_codec::backend::stress::{page, Kind, Rng};
use cannery_codec::Mode;

use super::validate::{load_table, open_backends, print_matrix, read_corpus, run_matrix};

/// Arguments of `cannery fuzz`.
#[derive(Args)]
pub struct FuzzArgs {
    /// The backend under test; every checked pair involves it.
    #[arg(long)]
    pub backend: String,
    /// Backends to check it against, comma-separated (default: every available one).
    #[arg(long, value_delimiter = ',')]
    pub against: Option<Vec<String>>,
    /// Pages to generate.
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
    /// Seed of the page generator (same seed, same pages).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Table for canned mode (file or built-in name).
    #[arg(long, default_value = "kernel-2024")]
    pub table: String,
    /// Modes to check, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "canned,fixed,dynamic")]
    pub modes: Vec<Mode>,
    /// Corpus whose pages are mutated (snapshot, `.pages` file or directory; first 10,000 pages).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Directory for reproducer files.
    #[arg(long, default_value = "cannery-fuzz-repro")]
    pub repro_dir: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `cannery fuzz`.
pub fn run(args: FuzzArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    let corpus = match &args.corpus {
        Some(p) => read_corpus(p, Some(10_000))?.0,
        None => Vec::new(),
    };
    let mut names = vec![args.backend.clone()];
    match &args.against {
        Some(list) => names.extend(list.iter().filter(|n| **n != args.backend).cloned()),
        None => names.extend(
            cannery_codec::backend::NAMES
                .iter()
                .filter(|n| **n != args.backend && cannery_codec::backend::open(n).is_ok())
                .map(|n| n.to_string()),
        ),
    }
    let mut comps = open_backends(Some(&names))?;
    let mut decomps = open_backends(Some(&names))?;
    let mut rng = Rng::new(args.seed);
    let mut kinds: Vec<Kind> = Kind::GENERATED.to_vec();
    if !corpus.is_empty() {
        kinds.push(Kind::Mutated);
    }
    let mut pages = Vec::with_capacity(args.iterations);
    let mut sources = Vec::with_capacity(args.iterations);
    for i in 0..args.iterations {
        let kind = kinds[i % kinds.len()];
        let base = (kind == Kind::Mutated).then(|| &corpus[rng.below(corpus.len())][..]);
        pages.push(page(kind, &mut rng, base));
        sources.push(format!("seed{}-iter{i}-{}", args.seed, kind.name()));
    }
    let cells = run_matrix(
        &table,
        &args.modes,
        &mut comps,
        &mut decomps,
        &pages,
        &sources,
        Some(&args.repro_dir),
        Some(&args.backend),
    )?;
    let failed: usize = cells.iter().map(|c| c.failed).sum();
    let checked: usize = cells.iter().map(|c| c.pages).sum();
    if args.json {
        let v = serde_json::json!({
            "backend": args.backend,
            "against": &names[1..],
            "seed": args.seed,
            "iterations": args.iterations,
            "table": table.id(),
            "pair_checks": checked,
            "mismatches": failed,
            "matrix": cells,
            "ok": failed == 0,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "fuzz {} against {}: {} pages (seed {}), table {}",
            args.backend,
            names[1..].join(", "),
            args.iterations,
            args.seed,
            table.id()
        );
        print_matrix(&cells);
        println!("\nfuzz: {checked} pair checks, {failed} mismatches");
    }
    if failed > 0 {
        bail!(
            "{failed} mismatches; reproducers in {}",
            args.repro_dir.display()
        );
    }
    Ok(())
}
