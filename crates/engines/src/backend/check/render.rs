//! The validation matrix as text, for `cannery validate` and `cannery
//! fuzz`: one table per mode (rows compress, columns decompress, each cell
//! passed/pages with incompressible pages in parentheses), then the skip
//! reasons, the failures with their reproducers, and how canned streams
//! re-encoded. The tables are [`cannery_codec::tabular`] grids. Pure string
//! building: it prints nothing.

use super::matrix::Cell;
use cannery_codec::tabular::{Align, Grid, Style};

/// The matrix as text, one table per mode: rows compress, columns
/// decompress; then the skip reasons, failures and re-encoding results.
pub fn render_matrix(cells: &[Cell]) -> String {
    use std::fmt::Write;
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

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::tabular::cells;

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
}
