//! What `cannery validate`, `cannery fuzz` and `cannery backends` print:
//! the validation matrix as text (one table per mode: rows compress,
//! columns decompress, each cell passed/pages with incompressible pages in
//! parentheses, then the skip reasons, the failures with their reproducers,
//! and how canned streams re-encoded), the validation and fuzz reports
//! around it, and the survey of engines. The engines crate runs the checks
//! and returns serializable reports; the tables here are [`crate::tabular`]
//! grids. Pure string building: it prints nothing.

use std::fmt::Write;

use crate::tabular::{Align, Grid, Style};
use cannery_codec::mode::Mode;
use cannery_engines::backend::check::{Cell, FuzzReport, ValidationReport};
use cannery_engines::backend::Availability;

/// The matrix as text, one table per mode: rows compress, columns
/// decompress; then the skip reasons, failures and re-encoding results.
pub fn render_matrix(cells: &[Cell]) -> String {
    let mut out = String::new();
    let mut modes: Vec<&str> = Vec::new();
    for c in cells {
        if !modes.contains(&c.mode.as_str()) {
            modes.push(&c.mode);
        }
    }
    for mode in modes {
        let mode_cells: Vec<&Cell> = cells.iter().filter(|c| c.mode == mode).collect();
        let _ = writeln!(out, "\nmode {mode}: rows compress, columns decompress; cell = passed/pages (incompressible)");
        out += &mode_table(&mode_cells).render(Style::Text);
        for c in &mode_cells {
            if let Some(r) = &c.skip_reason {
                let _ = writeln!(out, "  skipped {} -> {}: {r}", c.compressor, c.decompressor);
            }
            for f in &c.failures {
                let _ = writeln!(
                    out,
                    "  FAIL {} -> {} page {}: {}: {}{}",
                    c.compressor,
                    c.decompressor,
                    f.page,
                    f.stage,
                    f.detail,
                    f.reproducer
                        .as_ref()
                        .map(|p| format!(" (reproducer {p})"))
                        .unwrap_or_default()
                );
            }
            if !c.reencode.is_empty() && c.decompressor == "software" {
                let parts: Vec<String> =
                    c.reencode.iter().map(|(k, v)| format!("{k} {v}")).collect();
                let _ = writeln!(
                    out,
                    "  {} canned streams re-encode bit-exactly with our Huffman stage: {}",
                    c.compressor,
                    parts.join(", ")
                );
            }
        }
    }
    out
}

/// One mode's cells as a table: a row per compressor (with its path), a
/// column per decompressor, in the order they first appear.
fn mode_table(cells: &[&Cell]) -> Grid {
    let mut comps: Vec<(&str, &str)> = Vec::new();
    let mut decomps: Vec<&str> = Vec::new();
    for c in cells {
        if !comps.iter().any(|(n, _)| *n == c.compressor) {
            comps.push((&c.compressor, &c.compressor_path));
        }
        if !decomps.contains(&c.decompressor.as_str()) {
            decomps.push(&c.decompressor);
        }
    }
    let mut columns = vec![("compressor (path)", Align::Left)];
    columns.extend(decomps.iter().map(|d| (*d, Align::Right)));
    let mut g = Grid::new(&columns);
    for (comp, path) in &comps {
        let mut row = vec![format!("{comp} ({path})")];
        for d in &decomps {
            let cell = cells
                .iter()
                .find(|c| c.compressor == *comp && c.decompressor == *d);
            row.push(match cell {
                None => "-".to_string(),
                Some(c) if c.skip_reason.is_some() => "skipped".into(),
                Some(c) if c.failed > 0 => format!("FAIL {}/{}", c.failed, c.pages),
                Some(c) => format!("{}/{} ({})", c.passed, c.pages, c.incompressible),
            });
        }
        g.row(row);
    }
    g
}

/// The report as text: table, backends (a table of their paths), rule
/// results (a table), the matrix and the counts line.
pub fn render_validation(r: &ValidationReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "table {} ({}), corpus {}: {} pages",
        r.table.id,
        r.table.name.as_deref().unwrap_or("unnamed"),
        r.corpus,
        r.pages
    );
    let mut backends = Grid::new(&[
        ("backend", Align::Left),
        ("path", Align::Left),
        ("why that path", Align::Left),
    ]);
    for b in &r.backends {
        backends.row(vec![
            b.name.to_string(),
            b.path.to_string(),
            b.path_note.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    out += &backends.render(Style::Text);
    let _ = writeln!(out, "\ncanned-mode table rules:");
    let mut rules = Grid::new(&[
        ("backend", Align::Left),
        ("direction", Align::Left),
        ("rule", Align::Left),
        ("result", Align::Left),
    ]);
    for r in &r.rules {
        rules.row(vec![
            r.backend.clone(),
            r.direction.to_string(),
            r.rule.to_string(),
            match &r.detail {
                None => "ok".to_string(),
                Some(d) => format!("BROKEN: {d}"),
            },
        ]);
    }
    out += &rules.render(Style::Text);
    out += &render_matrix(&r.matrix);
    let _ = writeln!(out, "\nvalidate: {}", r.counts.line());
    out
}

/// The report as text: what was fuzzed, the matrix, the counts line.
pub fn render_fuzz(r: &FuzzReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "fuzz {} against {}: {} pages (seed {}), table {}",
        r.backend,
        r.against.join(", "),
        r.iterations,
        r.seed,
        r.table
    );
    out += &render_matrix(&r.matrix);
    let _ = writeln!(out, "\nfuzz: {}", r.counts.line());
    out
}

/// The survey as text: a table with one row per backend (status, modes
/// each way, path), then each backend's note, why it is missing, and what
/// the machine says of its devices.
pub fn render_survey(survey: &[Availability]) -> String {
    let modes = |m: &[Mode]| -> String {
        if m.is_empty() {
            "-".into()
        } else {
            m.iter().map(|m| m.name()).collect::<Vec<_>>().join(",")
        }
    };
    let mut g = Grid::new(&[
        ("backend", Align::Left),
        ("status", Align::Left),
        ("compresses", Align::Left),
        ("decompresses", Align::Left),
        ("path", Align::Left),
    ]);
    let mut notes = String::new();
    for a in survey {
        match &a.capabilities {
            Some(c) => {
                g.row(vec![
                    a.name.to_string(),
                    "available".into(),
                    modes(&c.compress),
                    modes(&c.decompress),
                    c.path.name().to_string(),
                ]);
                if let Some(n) = &c.path_note {
                    let _ = writeln!(notes, "{}: note: {n}", a.name);
                }
            }
            None => {
                g.row(vec![
                    a.name.to_string(),
                    "missing".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ]);
                if let Some(r) = &a.reason {
                    let _ = writeln!(notes, "{}: why: {r}", a.name);
                }
            }
        }
        for d in &a.devices {
            let _ = writeln!(notes, "{}: device: {d}", a.name);
        }
    }
    g.render(Style::Text) + &notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabular::cells;
    use cannery_codec::Table;
    use cannery_engines::backend::check::validate;
    use cannery_engines::backend::software::Software;
    use cannery_engines::backend::{survey, Engine};

    fn cell(comp: &str, decomp: &str, passed: usize, skipped: bool) -> Cell {
        Cell {
            mode: "canned".into(),
            compressor: comp.into(),
            compressor_path: "software".into(),
            decompressor: decomp.into(),
            pages: 10,
            passed,
            failed: 10 - passed,
            skip_reason: skipped.then(|| "why".into()),
            ..Cell::default()
        }
    }

    #[test]
    fn a_mode_is_a_table_of_compressors_by_decompressors() {
        let matrix = [
            cell("software", "software", 10, false),
            cell("software", "zlib", 0, true),
            cell("qpl", "software", 7, false),
        ];
        let text = render_matrix(&matrix);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[2], Style::Text),
            ["compressor (path)", "software", "zlib"],
            "{text}"
        );
        assert_eq!(
            cells(lines[3], Style::Text),
            ["software (software)", "10/10 (0)", "skipped"]
        );
        assert_eq!(
            cells(lines[4], Style::Text),
            ["qpl (software)", "FAIL 3/10", "-"]
        );
        assert_eq!(lines[5], "  skipped software -> zlib: why");
        // The same columns as markdown.
        let refs: Vec<&Cell> = matrix.iter().collect();
        let md = mode_table(&refs).render(Style::Markdown);
        assert_eq!(
            cells(md.lines().next().unwrap(), Style::Markdown),
            cells(lines[2], Style::Text)
        );
        assert!(
            md.lines().all(|l| cells(l, Style::Markdown).len() == 3),
            "{md}"
        );
    }

    #[test]
    fn the_validation_report_lists_backends_rules_and_the_matrix() {
        // One page of runs of 64 equal bytes, canned only.
        let page: Vec<u8> = (0..4096u32).map(|j| (j >> 6) as u8).collect();
        let engine = || -> Vec<Box<dyn Engine>> { vec![Box::new(Software::new())] };
        let (mut comps, mut decomps) = (engine(), engine());
        let r = validate::<()>(
            &Table::kernel_2024(),
            "one page",
            &[Mode::Canned],
            &mut comps,
            &mut decomps,
            &[page],
            &["w#0".to_string()],
            false,
            &mut |_| Ok(None),
            &mut |_, _| {},
        )
        .unwrap();
        assert!(r.ok, "{:?}", r.counts);
        let text = render_validation(&r);
        assert!(text.starts_with("table "), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[1], Style::Text),
            ["backend", "path", "why that path"]
        );
        assert_eq!(cells(lines[2], Style::Text)[..2], ["software", "software"]);
        let rules = lines
            .iter()
            .position(|l| l.starts_with("canned-mode"))
            .unwrap();
        assert_eq!(
            cells(lines[rules + 1], Style::Text),
            ["backend", "direction", "rule", "result"]
        );
        assert_eq!(cells(lines[rules + 2], Style::Text).last(), Some(&"ok"));
        assert!(text.contains("\nvalidate: "), "{text}");
    }

    #[test]
    fn one_row_per_backend_then_what_explains_them() {
        let mut s = survey();
        s.push(Availability {
            name: "imaginary",
            available: false,
            capabilities: None,
            reason: Some("not built".into()),
            devices: vec!["no such device".into()],
        });
        let text = render_survey(&s);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[0], Style::Text),
            ["backend", "status", "compresses", "decompresses", "path"]
        );
        for (a, line) in s.iter().zip(&lines[1..]) {
            let row = cells(line, Style::Text);
            assert_eq!(row.len(), 5, "{line}");
            assert_eq!(row[0], a.name);
            assert_eq!(row[1], if a.available { "available" } else { "missing" });
        }
        assert_eq!(cells(lines[1], Style::Text)[..2], ["software", "available"]);
        assert!(
            text.ends_with("imaginary: why: not built\nimaginary: device: no such device\n"),
            "{text}"
        );
    }
}
