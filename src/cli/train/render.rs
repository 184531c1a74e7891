//! Text rendering of the train and eval reports (the JSON forms are printed
//! as they are). Formatting only: every number comes from the report.

use std::collections::BTreeMap;
use std::fmt::Write;

use cannery_trainer::eval_corpus::EvalReport;
use cannery_trainer::evaluate::{Ceiling, ConstraintCost, Drift, ModeResult};
use cannery_trainer::report::TrainReport;

/// Modes in the order a reader compares them; others follow alphabetically.
const ORDER: &[&str] = &[
    "fixed",
    "canned:kernel-2024",
    "canned:fleet",
    "canned-fast",
    "canned-default",
    "canned-best",
    "dynamic-fast",
    "dynamic-best",
    "zstd-1",
    "zstd-3",
    "zstd-1-dict",
    "lz4",
    "libdeflate-1",
    "libdeflate-6",
];

fn label(mode: &str) -> String {
    match mode {
        "canned-fast" => "canned (own table, fast parse)".into(),
        "canned-default" => "canned (own table, default parse)".into(),
        "canned-best" => "canned (own table, best parse)".into(),
        "fixed" => "fixed (fast parse)".into(),
        "canned:kernel-2024" => "canned kernel-2024 (fast)".into(),
        "canned:fleet" => "canned fleet table (fast)".into(),
        m => m.into(),
    }
}

fn modes_table(out: &mut String, modes: &BTreeMap<String, ModeResult>, with_cross: bool) {
    let _ = writeln!(
        out,
        "  {:<38} {:>7} {:>9} {:>8}",
        "mode", "ratio", "eff.ratio", "incompr."
    );
    let mut keys: Vec<&String> = ORDER
        .iter()
        .filter_map(|k| modes.get_key_value(*k).map(|(k, _)| k))
        .collect();
    for k in modes.keys() {
        let shown = ORDER.contains(&k.as_str());
        let cross = k.starts_with("canned:") && !shown;
        if !shown && (with_cross || !cross) {
            keys.push(k);
        }
    }
    for k in keys {
        let r = &modes[k];
        let _ = writeln!(
            out,
            "  {:<38} {:>7.3} {:>9.3} {:>8}",
            label(k),
            r.ratio,
            r.effective_ratio,
            r.incompressible_pages
        );
    }
}

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        100.0 * (a / b - 1.0)
    } else {
        0.0
    }
}

fn qpl_cost(out: &mut String, cost: Option<&ConstraintCost>) {
    if let Some(c) = cost {
        let _ = writeln!(
            out,
            "  --qpl-compatible costs {:+.2} % in bits at the fast parse (against the table trained \
             from the same statistics without it)",
            c.cost_percent
        );
    }
}

fn targets(out: &mut String, modes: &BTreeMap<String, ModeResult>, ceiling: &Ceiling) {
    if let (Some(c), Some(f)) = (modes.get("canned-fast"), modes.get("fixed")) {
        let _ = writeln!(
            out,
            "  canned (fast) vs fixed: {:+.1} % ratio (target ≥ +12 %)",
            pct(c.ratio, f.ratio)
        );
    }
    if ceiling.pages > 0 {
        let _ = writeln!(
            out,
            "  single-table ceiling at the fast parse: {:+.2} % over fixed in bits (this table {:+.2} %)",
            ceiling.ceiling_gain_percent, ceiling.table_gain_percent
        );
    }
    if let (Some(c), Some(d)) = (modes.get("canned-best"), modes.get("dynamic-best")) {
        let _ = writeln!(
            out,
            "  canned (best) vs dynamic (best): {:+.1} % ratio (target ≥ -3 %)",
            pct(c.ratio, d.ratio)
        );
    }
}

/// The train report as text.
pub fn train_report(r: &TrainReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "corpus {}: {} workloads, options {}",
        r.corpus,
        r.workloads.len(),
        serde_json::Value::Object(r.options.clone())
    );
    let _ = writeln!(
        out,
        "ratios on held-out pages (ratio: incompressible pages count 4096 bytes; eff.ratio: \
         zero/same-filled pages added at ~0 bytes)"
    );
    for w in &r.workloads {
        let _ = writeln!(out);
        let held_out = if w.test_pages < w.held_out_pages {
            format!("{} held out ({} evaluated)", w.held_out_pages, w.test_pages)
        } else {
            format!("{} held out", w.test_pages)
        };
        let _ = writeln!(
            out,
            "workload {}: {} pages read, {} zero/same-filled, {} training, {held_out}; table {}",
            w.name,
            w.pages_read,
            w.same_filled_pages,
            w.train_pages,
            w.table_id.as_deref().unwrap_or("(none: fleet table used)")
        );
        if let Some(s) = &w.skipped {
            let _ = writeln!(out, "  skipped: {s}");
        }
        modes_table(&mut out, &w.modes, false);
        targets(&mut out, &w.modes, &w.ceiling);
        qpl_cost(&mut out, w.qpl_constraint.as_ref());
        for s in &w.refinement {
            let _ = writeln!(
                out,
                "  best refinement step {}: table {} validation {} bytes{}",
                s.iteration,
                s.table_id,
                s.validation_bytes,
                if s.accepted { "" } else { " (rejected)" }
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "fleet (all workloads, {} held-out pages; canned-* = each workload's own table): table {}",
        r.fleet.test_pages, r.fleet.table_id
    );
    modes_table(&mut out, &r.fleet.modes, false);
    targets(&mut out, &r.fleet.modes, &r.fleet.ceiling);
    qpl_cost(&mut out, r.fleet.qpl_constraint.as_ref());

    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "cross-workload canned (fast) ratio: rows = table, columns = held-out pages"
    );
    let w = r
        .cross
        .workloads
        .iter()
        .map(|s| s.len().max(8))
        .collect::<Vec<_>>();
    let _ = write!(out, "  {:<16}", "table");
    for (name, &wd) in r.cross.workloads.iter().zip(&w) {
        let _ = write!(out, " {name:>wd$}");
    }
    let _ = writeln!(out);
    for (t, row) in r.cross.tables.iter().zip(&r.cross.ratio) {
        let _ = write!(out, "  {t:<16}");
        for (v, &wd) in row.iter().zip(&w) {
            let _ = write!(out, " {v:>wd$.3}");
        }
        let _ = writeln!(out);
    }
    if let Some(c) = &r.clusters {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{} clustered tables (training pages {:?}, {} iterations): best-of-{} ratio {:.3} vs \
             fleet table {:.3} ({:+.2} %)",
            c.k,
            c.train_pages_per_table,
            c.iterations,
            c.k,
            c.best_of_k_ratio,
            c.fleet_ratio,
            c.gain_percent
        );
    }
    if !r.smoothing.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "smoothing (held-out bits per page, all workloads, own tables):"
        );
        for s in &r.smoothing {
            let _ = writeln!(
                out,
                "  {:<16} {:>10.1} bits/page  {:+.2} %",
                s.smoothing, s.bits_per_page, s.excess_percent
            );
        }
    }
    out
}

/// The eval report (built as JSON) as text.
pub fn eval_report(r: &EvalReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "table {} ({}) on corpus {}",
        r.table_id,
        r.table_name.as_deref().unwrap_or("unnamed"),
        r.corpus
    );
    for w in &r.workloads {
        let _ = writeln!(out);
        let _ = writeln!(out, "workload {}: {} pages", w.name, w.pages);
        modes_table(&mut out, &w.modes, true);
        drift_line(&mut out, w.drift.as_ref());
    }
    let _ = writeln!(out);
    let _ = write!(out, "overall:");
    drift_line(&mut out, r.drift.as_ref());
    out
}

fn drift_line(out: &mut String, d: Option<&Drift>) {
    let Some(d) = d else {
        let _ = writeln!(out, "  drift: no pages");
        return;
    };
    let _ = writeln!(
        out,
        "  drift: {:.1} bits/page above the corpus' own table ({:.2} %, threshold {} %){}",
        d.drift_bits_per_page,
        d.drift_percent,
        serde_json::json!(d.threshold_percent),
        if d.retrain {
            ": retrain recommended"
        } else {
            ": no retraining needed"
        }
    );
}
