//! `cannery train --histograms`: one table from merged histogram files
//! (the fleet workflow: `stats` on each machine, `merge`, then this).

use cannery_lab::histogram_files::{train_from_files, HistogramTable};
use cannery_trainer::TrainOptions;

use super::{write_file, TrainArgs};

/// `cannery train --histograms`.
pub fn train(args: &TrainArgs, topts: &TrainOptions) -> anyhow::Result<()> {
    let mut warn = |w: String| crate::cli::out::warn(w);
    let created = super::created_now()?;
    let HistogramTable {
        table: t,
        histogram: h,
        bits_per_page: bits,
    } = train_from_files(
        &args.histograms,
        topts,
        &args.name,
        args.fallback,
        &created,
        &mut warn,
    )?;
    let path = cannery_lab::train_files::histogram_table_path(&args.out, &args.name);
    write_file(&path, &t.to_json(), args.force)?;
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
