//! The train and eval reports as text, for people (the JSON forms are the
//! reports serialized as they are). Formatting only: every number comes
//! from the report, modes are named by their one key ([`ModeKey`]), as in
//! JSON and Python, and the tables (modes, cross-workload matrix,
//! smoothing) are `crate::tabular` grids.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::tabular::{Align, Grid};
use cannery_codec::Level;
use cannery_engines::peer::PeerKind;

use crate::eval_corpus::{EvalReport, HistogramEvalReport};
use crate::evaluate::{Ceiling, ConstraintCost, Drift, ModeResult};
use crate::mode_key::ModeKey;
use crate::report::{CrossMatrix, TargetCheck, TrainReport};
use cannery_trainer::train::SmoothingResult;

/// The line that explains the mode names, printed once above the tables.
pub const LEGEND: &str = "modes: canned-LEVEL = the workload's own table at that parse \
                          (fleet: each workload's own); canned:NAME = table NAME at the fast \
                          parse; fixed = RFC 1951 fixed codes; dynamic-LEVEL = per-page codes; \
                          others are peer compressors at their level";

/// Modes in the order a reader compares them; others follow by name.
fn order() -> Vec<ModeKey> {
    vec![
        ModeKey::Fixed,
        ModeKey::table("kernel-2024"),
        ModeKey::table("fleet"),
        ModeKey::Canned(Level::Fast),
        ModeKey::Canned(Level::Default),
        ModeKey::Canned(Level::Best),
        ModeKey::Dynamic(Level::Fast),
        ModeKey::Dynamic(Level::Best),
        ModeKey::Peer(PeerKind::Zstd(1)),
        ModeKey::Peer(PeerKind::Zstd(3)),
        ModeKey::Peer(PeerKind::ZstdDict(1)),
        ModeKey::Peer(PeerKind::Lz4),
        ModeKey::Peer(PeerKind::Lz4Dict),
        ModeKey::Peer(PeerKind::Libdeflate(1)),
        ModeKey::Peer(PeerKind::Libdeflate(6)),
    ]
}

/// The modes of `modes` in reading order, cross-workload tables
/// (`canned:NAME` outside [`order`]) only `with_cross`: one row each with
/// its ratio, effective ratio and incompressible pages.
fn modes_table(modes: &BTreeMap<ModeKey, ModeResult>, with_cross: bool) -> Grid {
    let order = order();
    let mut keys: Vec<&ModeKey> = order
        .iter()
        .filter_map(|k| modes.get_key_value(k).map(|(k, _)| k))
        .collect();
    for k in modes.keys() {
        let shown = order.contains(k);
        let cross = matches!(k, ModeKey::CannedTable(..)) && !shown;
        if !shown && (with_cross || !cross) {
            keys.push(k);
        }
    }
    let mut g = Grid::new(&[
        ("mode", Align::Left),
        ("ratio", Align::Right),
        ("eff.ratio", Align::Right),
        ("incompr.", Align::Right),
    ]);
    for k in keys {
        let r = &modes[k];
        g.row(vec![
            k.to_string(),
            format!("{:.3}", r.ratio),
            format!("{:.3}", r.effective_ratio),
            r.incompressible_pages.to_string(),
        ]);
    }
    g
}

/// The cross-workload matrix: a row per table, a column per workload's
/// held-out pages, each cell the canned (fast) ratio.
fn cross_table(c: &CrossMatrix) -> Grid {
    let mut columns = vec![("table", Align::Left)];
    columns.extend(c.workloads.iter().map(|w| (w.as_str(), Align::Right)));
    let mut g = Grid::new(&columns);
    for (t, row) in c.tables.iter().zip(&c.ratio) {
        let mut cells = vec![t.clone()];
        cells.extend(row.iter().map(|v| format!("{v:.3}")));
        g.row(cells);
    }
    g
}

/// Held-out bits per page of each smoothing's tables, and how far it is
/// above the best one.
fn smoothing_table(s: &[SmoothingResult]) -> Grid {
    let mut g = Grid::new(&[
        ("smoothing", Align::Left),
        ("bits/page", Align::Right),
        ("above best %", Align::Right),
    ]);
    for x in s {
        g.row(vec![
            x.smoothing.clone(),
            format!("{:.1}", x.bits_per_page),
            format!("{:+.2}", x.excess_percent),
        ]);
    }
    g
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

/// One target's line: the gain, the target, met or missed, and why.
fn target_line(out: &mut String, t: &TargetCheck) {
    let _ = writeln!(
        out,
        "  {}: {:+.1} % ratio (target ≥ {:+} %: {}){}",
        t.name,
        t.gain_percent,
        t.target_percent,
        if t.met { "met" } else { "MISSED" },
        t.why.as_ref().map(|w| format!("; {w}")).unwrap_or_default()
    );
}

fn targets(out: &mut String, checks: &[TargetCheck], ceiling: &Ceiling) {
    let mut checks = checks.iter();
    if let Some(t) = checks.next() {
        target_line(out, t);
    }
    if ceiling.pages > 0 {
        let _ = writeln!(
            out,
            "  single-table ceiling at the fast parse: {:+.2} % over fixed in bits (this table {:+.2} %)",
            ceiling.ceiling_gain_percent, ceiling.table_gain_percent
        );
    }
    for t in checks {
        target_line(out, t);
    }
}

/// The closing line on targets: all met, or which workloads missed which.
fn targets_summary(out: &mut String, r: &TrainReport) {
    let mut missed = Vec::new();
    for w in &r.workloads {
        for t in w.targets.iter().filter(|t| !t.met) {
            missed.push(format!("{} ({} {:+.1} %)", w.name, t.name, t.gain_percent));
        }
    }
    for t in r.fleet.targets.iter().filter(|t| !t.met) {
        missed.push(format!("fleet ({} {:+.1} %)", t.name, t.gain_percent));
    }
    let _ = writeln!(out);
    if missed.is_empty() {
        let _ = writeln!(out, "targets: all met");
    } else {
        let _ = writeln!(out, "targets missed: {}", missed.join(", "));
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
    let _ = writeln!(out, "{LEGEND}");
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
        out += &modes_table(&w.modes, false).render_indented(2);
        targets(&mut out, &w.targets, &w.ceiling);
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
    out += &modes_table(&r.fleet.modes, false).render_indented(2);
    targets(&mut out, &r.fleet.targets, &r.fleet.ceiling);
    qpl_cost(&mut out, r.fleet.qpl_constraint.as_ref());

    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "cross-workload canned (fast) ratio: rows = table, columns = held-out pages"
    );
    out += &cross_table(&r.cross).render_indented(2);
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
        out += &smoothing_table(&r.smoothing).render_indented(2);
    }
    under_target(&mut out, r);
    target_matrix(&mut out, r);
    targets_summary(&mut out, r);
    out
}

/// With a library target: each workload's table against the library's own
/// table, both through the library's compressor.
fn under_target(out: &mut String, r: &TrainReport) {
    let Some(fleet) = &r.under_target else {
        return;
    };
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "under the target's compressor ({}): cannery's table vs the table {}'s own workflow \
         (its statistics function and table builder) makes from the same training pages, \
         held-out pages",
        fleet.compressor,
        if fleet.target.starts_with("qpl") {
            "QPL"
        } else {
            "ISA-L"
        }
    );
    // Where the header travels with every stream (ISA-L), both parts.
    let headers = fleet.cannery.header_bits + fleet.library.header_bits > 0;
    let mut cols = vec![
        ("workload", Align::Left),
        ("pages", Align::Right),
        ("cannery ratio", Align::Right),
        ("library ratio", Align::Right),
        ("gain %", Align::Right),
    ];
    if headers {
        cols.extend([
            ("cannery header bits", Align::Right),
            ("library header bits", Align::Right),
            ("cannery body KiB", Align::Right),
            ("library body KiB", Align::Right),
        ]);
    }
    let mut g = Grid::new(&cols);
    let mut losers = Vec::new();
    let rows = r
        .workloads
        .iter()
        .filter_map(|w| w.under_target.as_ref().map(|c| (w.name.as_str(), c)))
        .chain(std::iter::once(("fleet (sum)", fleet)));
    let body_kib = |s: &cannery_trainer::target::Sizes| {
        format!(
            "{:.1}",
            (s.bytes as f64 - s.header_bits as f64 / 8.0) / 1024.0
        )
    };
    for (name, c) in rows {
        let mut row = vec![
            name.to_string(),
            c.cannery.pages.to_string(),
            format!("{:.3}", c.cannery.ratio()),
            format!("{:.3}", c.library.ratio()),
            format!("{:+.2}", 100.0 * c.gain()),
        ];
        if headers {
            row.extend([
                format!("{:.0}", c.cannery.header_bits_per_page()),
                format!("{:.0}", c.library.header_bits_per_page()),
                body_kib(&c.cannery),
                body_kib(&c.library),
            ]);
        }
        g.row(row);
        if c.cannery.bytes > c.library.bytes {
            losers.push(name.to_string());
        }
    }
    out.push_str(&g.render_indented(2));
    if !losers.is_empty() {
        let _ = writeln!(
            out,
            "  cannery's table compresses worse than the library's own on: {}",
            losers.join(", ")
        );
    }
}

/// With `--target-matrix`: tables trained for each target under each
/// target's compressor.
fn target_matrix(out: &mut String, r: &TrainReport) {
    let Some(m) = &r.target_matrix else {
        return;
    };
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "target × parse: fleet tables trained for each target (rows, QPL-compatible) under each \
         target's compressor (columns); held-out ratio, and its loss against the column's own table"
    );
    let mut columns = vec![("table for", Align::Left)];
    columns.extend(m.targets.iter().map(|t| (*t, Align::Right)));
    let mut g = Grid::new(&columns);
    for (row, t) in m.targets.iter().enumerate() {
        let mut cells = vec![t.to_string()];
        cells.extend((0..m.targets.len()).map(|col| {
            format!(
                "{:.3} ({:+.2} %)",
                m.sizes[row][col].ratio(),
                100.0 * (0.0 - m.loss(row, col))
            )
        }));
        g.row(cells);
    }
    out.push_str(&g.render_indented(2));
}

/// The eval report as text.
pub fn eval_report(r: &EvalReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "table {} ({}) on corpus {}",
        r.table_id,
        r.table_name.as_deref().unwrap_or("unnamed"),
        r.corpus
    );
    let _ = writeln!(out, "{LEGEND}");
    for w in &r.workloads {
        let _ = writeln!(out);
        let sample = w
            .sampled_from
            .map(|of| format!(" (a hash-based sample of {of})"))
            .unwrap_or_default();
        let _ = writeln!(out, "workload {}: {} pages{sample}", w.name, w.pages);
        out += &modes_table(&w.modes, true).render_indented(2);
        drift_line(&mut out, w.drift.as_ref());
    }
    let _ = writeln!(out);
    let _ = write!(out, "overall:");
    drift_line(&mut out, r.drift.as_ref());
    out
}

/// The text form of `cannery eval --histograms`: one drift line per
/// histogram, then all of them together.
pub fn histogram_eval_report(r: &HistogramEvalReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "table {} ({}) against {} histogram(s)",
        r.table_id,
        r.table_name.as_deref().unwrap_or("unnamed"),
        r.histograms.len()
    );
    for h in &r.histograms {
        let _ = write!(out, "{} ({} pages):", h.name, h.pages);
        drift_line(&mut out, h.drift.as_ref());
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode_key::key;
    use crate::tabular::{cells, Style};

    fn result(ratio: f64) -> ModeResult {
        ModeResult {
            ratio,
            effective_ratio: ratio * 1.5,
            incompressible_pages: 1,
            pages: 10,
            bytes_in: 40960,
            bytes_out: (40960.0 / ratio) as u64,
        }
    }

    /// `g` as text and as markdown: the same header cells in the same
    /// order, a separator row, one cell per column in every markdown row.
    fn same_columns_both_ways(g: &Grid) -> String {
        let text = g.render(Style::Text);
        let md = g.render(Style::Markdown);
        let lines: Vec<&str> = md.lines().collect();
        let header = cells(lines[0], Style::Markdown);
        assert_eq!(
            cells(text.lines().next().unwrap(), Style::Text),
            header,
            "{text}\n{md}"
        );
        assert!(lines[1].starts_with("|---"), "{md}");
        for l in &lines {
            assert_eq!(cells(l, Style::Markdown).len(), header.len(), "{md}");
        }
        assert_eq!(text.lines().count(), lines.len() - 1);
        text
    }

    #[test]
    fn modes_print_by_their_key_in_reading_order() {
        let modes: BTreeMap<ModeKey, ModeResult> = ["zstd-1", "canned-fast", "fixed", "canned:w2"]
            .iter()
            .map(|m| (key(m), result(3.0)))
            .collect();
        let out = same_columns_both_ways(&modes_table(&modes, false));
        let names: Vec<&str> = out
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        // Cross-workload tables only when asked for.
        assert_eq!(names, ["fixed", "canned-fast", "zstd-1"]);
        let out = same_columns_both_ways(&modes_table(&modes, true));
        assert!(out.contains("canned:w2"), "{out}");
        assert!(out.contains("  4.500 "), "effective ratio printed: {out}");
    }

    #[test]
    fn the_cross_matrix_and_smoothing_have_the_same_columns_as_text_and_markdown() {
        let cross = CrossMatrix {
            tables: vec!["redis".into(), "fleet".into()],
            workloads: vec!["redis".into(), "a-long-workload-name".into()],
            ratio: vec![vec![3.1, 2.0], vec![2.9, 2.25]],
        };
        let text = same_columns_both_ways(&cross_table(&cross));
        assert_eq!(
            cells(text.lines().nth(2).unwrap(), Style::Text),
            ["fleet", "2.900", "2.250"]
        );
        let smoothing = [SmoothingResult {
            smoothing: "add-one".into(),
            bits_per_page: 10123.45,
            excess_percent: 0.5,
        }];
        let text = same_columns_both_ways(&smoothing_table(&smoothing));
        assert_eq!(
            cells(text.lines().nth(1).unwrap(), Style::Text),
            ["add-one", "10123.5", "+0.50"]
        );
    }

    #[test]
    fn targets_are_marked_met_or_missed_with_the_ceiling_that_explains_a_miss() {
        let ceiling = |gain: f64| Ceiling {
            pages: 10,
            fixed_bits: 1000,
            table_bits: 900,
            optimal_bits: 890,
            table_gain_percent: gain - 0.1,
            ceiling_gain_percent: gain,
        };
        let modes = |canned: f64| {
            let mut m = BTreeMap::new();
            m.insert(ModeKey::Canned(Level::Fast), result(canned));
            m.insert(ModeKey::Fixed, result(1.0));
            m.insert(ModeKey::Canned(Level::Best), result(1.0));
            m.insert(ModeKey::Dynamic(Level::Best), result(1.1));
            m
        };
        let met = crate::report::check_targets(&modes(1.2), &ceiling(20.0));
        assert!(met[0].met && met[0].why.is_none(), "{met:?}");
        // 1.0 / 1.1: canned best is 9 % below dynamic best, under -3 %.
        assert!(!met[1].met);
        let missed = crate::report::check_targets(&modes(1.10), &ceiling(10.5));
        assert!(!missed[0].met);
        assert!(
            missed[0].why.as_deref().unwrap().contains("+10.5 %"),
            "{missed:?}"
        );
        // A miss the ceiling does not explain has no reason.
        let plain = crate::report::check_targets(&modes(1.10), &ceiling(20.0));
        assert!(!plain[0].met && plain[0].why.is_none());
        let mut text = String::new();
        targets(&mut text, &missed, &ceiling(10.5));
        assert!(
            text.contains(
                "canned-fast vs fixed: +10.0 % ratio (target ≥ +12 %: MISSED); no single table can"
            ),
            "{text}"
        );
    }
}
