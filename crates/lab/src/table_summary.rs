//! What `cannery table show` prints about a table: its id, header, Kraft
//! sums, the IAA rules it breaks, the 56-bit budget, every rule of
//! [`cannery_codec::table::rules`] and the code-length profile, as one serializable
//! [`TableSummary`] and its text form. Reads the table only.

use std::fmt::Write;

use serde::Serialize;

use crate::tabular::{Align, Grid};
use cannery_codec::table::rules::{BitBudget, Rule};
use cannery_codec::table::{Provenance, Table};

/// Kraft sums of the two codes (a complete code sums to `complete`).
#[derive(Clone, Debug, Serialize)]
pub struct KraftSums {
    /// Literal/length code.
    pub litlen: u64,
    /// Distance code.
    pub dist: u64,
    /// The sum of a complete code.
    pub complete: u64,
}

/// One rule and whether the table meets it.
#[derive(Clone, Debug, Serialize)]
pub struct RuleCheck {
    /// Rule name.
    pub rule: &'static str,
    /// True if the table meets it.
    pub ok: bool,
    /// Why not.
    pub detail: Option<String>,
}

/// Everything `table show` says about a table (its JSON form).
#[derive(Clone, Debug, Serialize)]
pub struct TableSummary {
    /// Content id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// Literal/length code lengths (286).
    pub litlen_lengths: Vec<u8>,
    /// Distance code lengths (30).
    pub dist_lengths: Vec<u8>,
    /// Bits of the implied dynamic block header.
    pub header_bits: usize,
    /// The header bytes, hex.
    pub header_hex: String,
    /// The driver's `gen_decomp_table_flags` for the header.
    pub gen_decomp_table_flags: u16,
    /// Kraft sums.
    pub kraft: KraftSums,
    /// True if no IAA canned-compression rule is broken.
    pub iaa_compatible: bool,
    /// The IAA rules broken.
    pub iaa_violations: Vec<String>,
    /// Header ‖ body is standard deflate.
    pub standard_deflate_header: bool,
    /// QPL/ISA-L's worst-case bits per token.
    pub bit_budget: BitBudget,
    /// Every rule.
    pub rules: Vec<RuleCheck>,
    /// Where the table comes from.
    pub provenance: Provenance,
}

impl TableSummary {
    /// The summary of `t`.
    pub fn of(t: &Table) -> TableSummary {
        let (ll, d) = t.kraft();
        let l = t.lengths();
        let violations: Vec<String> = t.iaa_violations().iter().map(|v| v.to_string()).collect();
        TableSummary {
            id: t.id(),
            name: t.name.clone(),
            litlen_lengths: l.litlen.to_vec(),
            dist_lengths: l.dist.to_vec(),
            header_bits: t.header().bits,
            header_hex: t
                .header()
                .bytes
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            gen_decomp_table_flags: t.header().gen_decomp_table_flags(),
            kraft: KraftSums {
                litlen: ll,
                dist: d,
                complete: 32768,
            },
            iaa_compatible: violations.is_empty(),
            iaa_violations: violations,
            standard_deflate_header: t.is_standard(),
            bit_budget: BitBudget::of(l),
            rules: Rule::ALL
                .iter()
                .map(|r| RuleCheck {
                    rule: r.name(),
                    ok: r.check(t).is_ok(),
                    detail: r.check(t).err(),
                })
                .collect(),
            provenance: t.provenance.clone(),
        }
    }

    /// The summary as text.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let name = self
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let _ = writeln!(out, "table     {}{name}", self.id);
        if let Some(s) = &self.provenance.source {
            let _ = writeln!(out, "source    {s}");
        }
        if let Some(c) = &self.provenance.corpus {
            let _ = writeln!(out, "corpus    {c}");
        }
        for (mode, r) in &self.provenance.ratios {
            let _ = writeln!(out, "ratio     {mode}: {r:.3}");
        }
        let _ = writeln!(
            out,
            "header    {} bits ({} bytes), gen_decomp_table_flags {:#x}",
            self.header_bits,
            self.header_hex.len() / 2,
            self.gen_decomp_table_flags
        );
        let _ = writeln!(
            out,
            "kraft     literal/length {}/32768, distance {}/32768",
            self.kraft.litlen, self.kraft.dist
        );
        if self.iaa_violations.is_empty() {
            let _ = writeln!(out, "IAA       ok: every rule for canned compression holds");
        } else {
            let _ = writeln!(
                out,
                "IAA       {} rule(s) broken:",
                self.iaa_violations.len()
            );
            for v in self.iaa_violations.iter().take(10) {
                let _ = writeln!(out, "          - {v}");
            }
            if self.iaa_violations.len() > 10 {
                let _ = writeln!(
                    out,
                    "          ... and {} more",
                    self.iaa_violations.len() - 10
                );
            }
        }
        let _ = writeln!(out, "budget    {} (QPL/ISA-L limit 56)", self.bit_budget);
        let _ = writeln!(out, "rules");
        let mut rules = Grid::new(&[("rule", Align::Left), ("result", Align::Left)]);
        for r in &self.rules {
            rules.row(vec![
                r.rule.to_string(),
                match &r.detail {
                    None => "ok".into(),
                    Some(e) => format!("BROKEN: {e}"),
                },
            ]);
        }
        out += &rules.render_indented(2);
        let _ = writeln!(
            out,
            "lengths   literal/length: {}",
            profile(&self.litlen_lengths)
        );
        let _ = writeln!(
            out,
            "          distance:       {}",
            profile(&self.dist_lengths)
        );
        out
    }
}

/// "len:count" pairs, e.g. `4:1 5:6 8:60`.
fn profile(lengths: &[u8]) -> String {
    let mut count = [0usize; 16];
    for &x in lengths {
        count[x as usize] += 1;
    }
    (0..16)
        .filter(|&i| count[i] > 0)
        .map(|i| format!("{i}:{}", count[i]))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabular::{cells, Style};

    #[test]
    fn the_kernel_table_summary() {
        let s = TableSummary::of(&Table::kernel_2024());
        assert!(s.iaa_compatible && s.standard_deflate_header);
        assert_eq!(s.litlen_lengths.len(), 286);
        assert_eq!(s.kraft.litlen, 32768);
        let text = s.render_text();
        assert!(
            text.starts_with(&format!("table     {} (kernel-2024)", s.id)),
            "{text}"
        );
        assert!(text.contains("IAA       ok"), "{text}");
        let rules = text.find("\nrules\n  rule ").expect("a table of rules");
        let rows: Vec<&str> = text[rules..]
            .lines()
            .skip(3)
            .take(Rule::ALL.len())
            .collect();
        assert_eq!(rows.len(), s.rules.len());
        for (row, r) in rows.iter().zip(&s.rules) {
            let result = if r.ok { "ok" } else { "BROKEN:" };
            let row = cells(row, Style::Text);
            assert_eq!(row[0], r.rule.to_string(), "{text}");
            assert!(row[1].starts_with(result), "{text}");
        }
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["rules"].as_array().unwrap().len(), Rule::ALL.len());
        assert_eq!(profile(&[4, 5, 5, 0]), "0:1 4:1 5:2");
    }
}
