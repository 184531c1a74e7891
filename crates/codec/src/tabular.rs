//! Every table cannery's reports print, laid out by one library
//! (comfy-table): a [`Grid`] holds the columns (header and alignment) and
//! rows of a table, and [`Grid::render`] lays it out as plain text or as
//! markdown ([`Style`]). Text and markdown of a report render the same
//! `Grid`, so they carry the same columns, headers and order.
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
    #[should_panic(expected = "a row of 1 cells in a table of 3 columns")]
    fn a_short_row_is_a_bug() {
        grid().row(vec!["x".into()]);
    }
}
