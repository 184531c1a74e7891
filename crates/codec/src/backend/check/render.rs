//! The validation matrix as text, for `cannery validate` and `cannery
//! fuzz`: one table per mode (rows compress, columns decompress, each cell
//! passed/pages with incompressible pages in parentheses), then the skip
//! reasons, the failures with their reproducers, and how canned streams
//! re-encoded. Pure string building: it prints nothing.

use super::matrix::Cell;

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
        let mut comps: Vec<(&str, &str)> = Vec::new();
        let mut decomps: Vec<&str> = Vec::new();
        for c in &mode_cells {
            if !comps.iter().any(|(n, _)| *n == c.compressor) {
                comps.push((&c.compressor, &c.compressor_path));
            }
            if !decomps.contains(&c.decompressor.as_str()) {
                decomps.push(&c.decompressor);
            }
        }
        let _ = writeln!(out, "\nmode {mode}: rows compress, columns decompress; cell = passed/pages (incompressible)");
        let _ = write!(out, "{:<24}", "");
        for d in &decomps {
            let _ = write!(out, " {d:>14}");
        }
        let _ = writeln!(out);
        for (comp, path) in &comps {
            let _ = write!(out, "{:<24}", format!("{comp} ({path})"));
            for d in &decomps {
                let cell = mode_cells
                    .iter()
                    .find(|c| c.compressor == *comp && c.decompressor == *d);
                let text = match cell {
                    None => "-".to_string(),
                    Some(c) if c.skip_reason.is_some() => "skipped".into(),
                    Some(c) if c.failed > 0 => format!("FAIL {}/{}", c.failed, c.pages),
                    Some(c) => format!("{}/{} ({})", c.passed, c.pages, c.incompressible),
                };
                let _ = write!(out, " {text:>14}");
            }
            let _ = writeln!(out);
        }
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
