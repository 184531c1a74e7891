//! `cannery fuzz`: decompression-equivalence fuzzing across backends.
//! Generates seeded stress pages (random, long runs, all 256 byte values,
//! near-incompressible, repeats at distances near 4096, words, and mutated
//! corpus pages), compresses each with every able backend, decompresses with
//! every able backend, and reports mismatches with reproducers. This is the
//! command a hardware owner runs to prove IAA/QAT equivalence, so like
//! `validate` it counts what ran and fails when a requested check did not
//! (no backend to compare against, a table the backend cannot use, zero
//! pages) unless `--allow-skips`.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use cannery_codec::backend::stress::{page, Kind, Rng};
use cannery_codec::backend::Backend;
use cannery_codec::table::rules;
use cannery_codec::{Mode, Table};

use cannery_codec::backend::check::{render_matrix, Counts, MatrixSpec};

use super::validate::{load_table, read_corpus, run_cells};

/// Arguments of `cannery fuzz`.
#[derive(Args)]
pub struct FuzzArgs {
    /// The backend under test; every checked pair involves it.
    #[arg(long)]
    pub backend: String,
    /// Backends to check it against, comma-separated (default: every available one).
    #[arg(long, value_delimiter = ',')]
    pub against: Option<Vec<String>>,
    /// Pages to generate (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub iterations: u64,
    /// Seed of the page generator (same seed, same pages).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Table for canned mode (file or built-in name). Default: kernel-2024,
    /// or, if the backend under test cannot compress with it (qpl), its
    /// QPL-loadable variant (every symbol coded, within the 56-bit budget).
    #[arg(long)]
    pub table: Option<String>,
    /// Modes to check, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "canned,fixed,dynamic")]
    pub modes: Vec<Mode>,
    /// Corpus whose pages are mutated (snapshot, `.pages` file or directory; first 10,000 pages).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Directory for reproducer files.
    #[arg(long, default_value = "cannery-fuzz-repro")]
    pub repro_dir: PathBuf,
    /// Exit 0 even if some requested checks could not run (still counted).
    #[arg(long)]
    pub allow_skips: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The table to fuzz canned mode with: `--table`, else kernel-2024 if the
/// backend under test can compress with it, else its QPL-loadable variant.
fn pick_table(named: Option<&str>, under_test: &dyn Backend) -> anyhow::Result<Table> {
    if let Some(n) = named {
        return load_table(n);
    }
    let k = Table::kernel_2024();
    let caps = under_test.capabilities();
    if !caps.can_compress(Mode::Canned) || caps.canned_compress_check(&k).is_ok() {
        return Ok(k);
    }
    Ok(rules::qpl_loadable_variant(&k))
}

/// Runs `cannery fuzz`.
pub fn run(args: FuzzArgs) -> anyhow::Result<()> {
    let corpus = match &args.corpus {
        Some(p) => read_corpus(p, Some(10_000))?.0,
        None => Vec::new(),
    };
    let mut names = vec![args.backend.clone()];
    match &args.against {
        Some(list) => {
            names.extend(list.iter().filter(|n| **n != args.backend).cloned());
            if names.len() == 1 {
                bail!(
                    "--against names only the backend under test ({}): there is nothing to \
                     compare it with",
                    args.backend
                );
            }
        }
        None => names.extend(
            cannery_codec::backend::NAMES
                .iter()
                .filter(|n| **n != args.backend && cannery_codec::backend::open(n).is_ok())
                .map(|n| n.to_string()),
        ),
    }
    let mut comps = cannery_codec::backend::open_many(Some(&names))?;
    let mut decomps = cannery_codec::backend::open_many(Some(&names))?;
    let table = pick_table(args.table.as_deref(), comps[0].as_ref())?;
    let mut rng = Rng::new(args.seed);
    let mut kinds: Vec<Kind> = Kind::GENERATED.to_vec();
    if !corpus.is_empty() {
        kinds.push(Kind::Mutated);
    }
    let n = usize::try_from(args.iterations)?;
    let mut pages = Vec::with_capacity(n);
    let mut sources = Vec::with_capacity(n);
    for i in 0..n {
        let kind = kinds[i % kinds.len()];
        let base = (kind == Kind::Mutated).then(|| &corpus[rng.below(corpus.len())][..]);
        pages.push(page(kind, &mut rng, base));
        sources.push(format!("seed{}-iter{i}-{}", args.seed, kind.name()));
    }
    let spec = MatrixSpec {
        table: &table,
        modes: &args.modes,
        only_involving: Some(&args.backend),
    };
    let cells = run_cells(
        &spec,
        &mut comps,
        &mut decomps,
        &pages,
        &sources,
        Some(&args.repro_dir),
    )?;
    let counts = Counts::of(&cells, pages.len());
    let verdict = counts
        .verdict(args.allow_skips)
        .map_err(|e| anyhow::anyhow!("fuzz: {e}"));
    if args.json {
        let v = serde_json::json!({
            "backend": args.backend,
            "against": &names[1..],
            "seed": args.seed,
            "iterations": args.iterations,
            "table": table.id(),
            "counts": counts,
            "matrix": cells,
            "allow_skips": args.allow_skips,
            "ok": verdict.is_ok(),
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
        print!("{}", render_matrix(&cells));
        println!("\nfuzz: {}", counts.line());
    }
    verdict.map_err(|e| {
        if counts.pages_failed > 0 {
            e.context(format!("reproducers in {}", args.repro_dir.display()))
        } else {
            e
        }
    })
}
