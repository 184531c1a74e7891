//! Every table cannery's reports print, laid out by one library
//! (comfy-table): a [`Grid`] holds the columns (header and alignment) and
//! rows of a table, and [`Grid::render`] lays it out as plain text or as
//! markdown ([`Style`]; [`Grid::render_indented`] for a text table under a
//! heading). Text and markdown of a report render the same `Grid`, so they
//! carry the same columns, headers and order; [`cells`] reads a rendered
//! line back, for the tests that check it.
//!
//! Cells are strings the caller has formatted (numbers in one unit per
//! column: [`crate::units`]). Nothing here wraps to a terminal's width,
//! colours, or prints.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// How a table is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Columns padded with spaces, the header on the first line, no rules
    /// or borders, no trailing spaces.
    Text,
    /// A GitHub-flavoured markdown table: the header, a separator row
    /// (`---:` under right-aligned columns), then the rows.
    Markdown,
}

/// Where a column's cells (and its header) sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Names and words.
    Left,
    /// Numbers.
    Right,
}

/// A table: its columns and its rows of cells, one cell per column.
#[derive(Clone, Debug)]
pub struct Grid {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Grid {
    /// A table with these columns (header, alignment) and no rows.
    pub fn new(columns: &[(&str, Align)]) -> Grid {
        Grid {
            headers: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|&(_, a)| a).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    ///
    /// # Panics
    /// If the row does not have one cell per column (a bug in the caller).
    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(
            cells.len(),
            self.headers.len(),
            "a row of {} cells in a table of {} columns ({:?})",
            cells.len(),
            self.headers.len(),
            self.headers
        );
        self.rows.push(cells);
    }

    /// The table laid out in `style`; every line ends in a newline.
    pub fn render(&self, style: Style) -> String {
        let cell = |s: &str| match style {
            Style::Text => s.to_string(),
            Style::Markdown => s.replace('|', "\\|"),
        };
        let mut t = Table::new();
        t.load_style(match style {
            Style::Text => presets::NOTHING,
            Style::Markdown => presets::ASCII_MARKDOWN,
        });
        t.set_content_arrangement(ContentArrangement::Disabled);
        t.set_header(self.headers.iter().map(|h| cell(h)).collect::<Vec<_>>());
        for r in &self.rows {
            t.add_row(r.iter().map(|c| cell(c)).collect::<Vec<_>>());
        }
        for (column, &a) in t.column_iter_mut().zip(&self.align) {
            if a == Align::Right {
                column.set_cell_alignment(CellAlignment::Right);
            }
            if style == Style::Text {
                // Two spaces between columns, none before the first.
                column.set_padding((0, 2));
            }
        }
        let mut out = String::new();
        for (i, line) in t.lines().enumerate() {
            let line = line.trim_end();
            if style == Style::Markdown && i == 1 {
                out += &self.separator(line);
            } else {
                out += line;
            }
            out.push('\n');
        }
        out
    }

    /// The table as [`Style::Text`] with every line indented by `by`
    /// spaces: a table under a heading.
    pub fn render_indented(&self, by: usize) -> String {
        let mut out = String::new();
        for line in self.render(Style::Text).lines() {
            out += &format!("{:by$}{line}\n", "");
        }
        out
    }

    /// comfy-table's markdown separator (`|----|----|`) with `:` closing the
    /// dashes of right-aligned columns, as GitHub reads alignment.
    fn separator(&self, line: &str) -> String {
        let dashes: Vec<&str> = line.trim_matches('|').split('|').collect();
        let cells: Vec<String> = dashes
            .iter()
            .zip(&self.align)
            .map(|(d, a)| match a {
                Align::Left => d.to_string(),
                Align::Right => format!("{}:", &d[1..]),
            })
            .collect();
        format!("|{}|", cells.join("|"))
    }
}

/// The cells of one line of a rendered table, trimmed: how tests read back
/// what a report printed. A text line splits where two spaces or more part
/// its columns, so an empty text cell is skipped (and a cell holding two
/// spaces in a row would split); a markdown row splits at its bars.
pub fn cells(line: &str, style: Style) -> Vec<&str> {
    match style {
        Style::Text => line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect(),
        Style::Markdown => line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        let mut g = Grid::new(&[
            ("mode", Align::Left),
            ("p50 µs", Align::Right),
            ("", Align::Left),
        ]);
        g.row(vec!["canned-fast".into(), "3.10".into(), "a|b".into()]);
        g.row(vec!["z".into(), "13.25".into(), "".into()]);
        g
    }

    #[test]
    fn text_pads_columns_and_right_aligns_numbers() {
        assert_eq!(
            grid().render(Style::Text),
            "mode         p50 µs\n\
             canned-fast    3.10  a|b\n\
             z             13.25\n"
        );
    }

    #[test]
    fn markdown_has_a_separator_row_with_alignment_and_escapes_bars() {
        assert_eq!(
            grid().render(Style::Markdown),
            "| mode        | p50 µs |      |\n\
             |-------------|-------:|------|\n\
             | canned-fast |   3.10 | a\\|b |\n\
             | z           |  13.25 |      |\n"
        );
    }

    #[test]
    fn both_styles_read_back_to_the_same_header_and_rows() {
        let mut g = Grid::new(&[("workload", Align::Left), ("pool KiB", Align::Right)]);
        g.row(vec!["redis".into(), "6232".into()]);
        g.row(vec!["a long name".into(), "8".into()]);
        let text = g.render(Style::Text);
        let text: Vec<Vec<&str>> = text.lines().map(|l| cells(l, Style::Text)).collect();
        let md = g.render(Style::Markdown);
        let md: Vec<Vec<&str>> = md
            .lines()
            .filter(|l| !l.starts_with("|--"))
            .map(|l| cells(l, Style::Markdown))
            .collect();
        assert_eq!(text, md);
        assert_eq!(text[2], ["a long name", "8"]);
        assert_eq!(
            g.render_indented(2),
            "  workload     pool KiB\n  redis            6232\n  a long name         8\n"
        );
    }

    #[test]
    #[should_panic(expected = "a row of 1 cells in a table of 3 columns")]
    fn a_short_row_is_a_bug() {
        grid().row(vec!["x".into()]);
    }
}
