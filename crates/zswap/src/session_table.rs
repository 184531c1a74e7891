//! What the reports of the two kernel sessions (`zswap-kernel`,
//! `zram-kernel`) share: a rows table that ends in the per-page times of
//! the way out and the way back (p50 and p99, µs) and the pages that came
//! back different, and the closing lines that say what was restored.

use std::fmt;

use cannery_lab::tabular::{Align, Grid};
use cannery_lab::units::micros;

/// A table of `leading` columns, then `{out} p50 µs`, `{out} p99 µs`,
/// `{back} p50 µs`, `{back} p99 µs` and `differing pages`.
pub(crate) fn session_grid(leading: &[(&str, Align)], out: &str, back: &str) -> Grid {
    let times: Vec<String> = [out, back]
        .iter()
        .flat_map(|way| ["p50", "p99"].map(|q| format!("{way} {q} µs")))
        .collect();
    let mut columns = leading.to_vec();
    columns.extend(times.iter().map(|h| (h.as_str(), Align::Right)));
    columns.push(("differing pages", Align::Right));
    Grid::new(&columns)
}

/// Adds a row to a [`session_grid`]: the `leading` cells, then the times
/// (`[out p50, out p99, back p50, back p99]`, in ns) and the mismatches.
pub(crate) fn session_row(
    grid: &mut Grid,
    mut leading: Vec<String>,
    times_ns: [u64; 4],
    mismatches: impl fmt::Display,
) {
    leading.extend(times_ns.map(micros));
    leading.push(mismatches.to_string());
    grid.row(leading);
}

/// The closing lines: `restored: …` for each setting put back, then
/// `NOT RESTORED: …` for each that could not be.
pub(crate) fn write_restored(
    f: &mut fmt::Formatter<'_>,
    restored: &[String],
    failures: &[String],
) -> fmt::Result {
    for s in restored {
        writeln!(f, "restored: {s}")?;
    }
    for s in failures {
        writeln!(f, "NOT RESTORED: {s}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_lab::tabular::{cells, Style};

    #[test]
    fn the_times_and_mismatches_close_every_row() {
        let mut g = session_grid(&[("workload", Align::Left)], "write", "read");
        session_row(&mut g, vec!["redis".into()], [2500, 9000, 1200, 3000], 4u64);
        let text = g.render(Style::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[0], Style::Text),
            [
                "workload",
                "write p50 µs",
                "write p99 µs",
                "read p50 µs",
                "read p99 µs",
                "differing pages"
            ]
        );
        assert_eq!(
            cells(lines[1], Style::Text),
            ["redis", "2.50", "9.00", "1.20", "3.00", "4"]
        );
    }
}
