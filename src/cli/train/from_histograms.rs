//! `cannery train --histograms`: one table from merged histogram files
//! (the fleet workflow: `stats` on each machine, `merge`, then this).

use cannery_trainer::train::{bits_under, fallback_table, table_from_histogram};
use cannery_trainer::TrainOptions;

use super::{read_merged, write_file, TrainArgs};

/// `cannery train --histograms`.
pub fn train(args: &TrainArgs, topts: &TrainOptions) -> anyhow::Result<()> {
    let h = read_merged(&args.histograms)?;
    let mut t = match table_from_histogram(&h, &topts.table, &args.name) {
        Ok(t) => t,
        Err(e) if args.fallback => {
            crate::cli::out::warn(format!("{e}; writing the kernel-2024 table instead"));
            fallback_table(&e.to_string(), None)
        }
        Err(e) => return Err(e.into()),
    };
    t.provenance.corpus = Some(
        args.histograms
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" + "),
    );
    let path = cannery_lab::train_files::histogram_table_path(&args.out, &args.name);
    t.provenance.created = Some(super::created_now()?);
    write_file(&path, &t.to_json(), args.force)?;
    let bits = bits_under(&h.counts, &t) as f64 / h.pages.max(1) as f64;
    if args.json {
        let v = serde_json::json!({
            "table_id": t.id(),
            "path": path.display().to_string(),
            "pages": h.pages,
            "parse": h.settings().parse.name(),
            "bits_per_page": (bits * 100.0).round() / 100.0,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        outln!(
            "trained table {} from {} pages ({} parse): {:.0} bits per page on its own data",
            t.id(),
            h.pages,
            h.settings().parse,
            bits
        )?;
    }
    crate::cli::out::status(format!("wrote {}", path.display()));
    Ok(())
}
