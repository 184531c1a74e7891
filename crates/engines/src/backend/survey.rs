//! What this build and machine offer: every known backend opened once
//! ([`survey`]), with its capabilities or why it is missing and what the
//! machine says about IAA and QAT devices, and that survey as text
//! ([`render_survey`], what `cannery backends` prints).

use serde::Serialize;

use super::{check, open, Capabilities, EngineError, NAMES};
use cannery_codec::mode::Mode;
use cannery_codec::tabular::{Align, Grid, Style};

/// Whether a backend can be opened here, and why not.
#[derive(Clone, Debug, Serialize)]
pub struct Availability {
    /// Engine name.
    pub name: &'static str,
    /// True if [`open`] succeeds.
    pub available: bool,
    /// Its capabilities, when available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Capabilities>,
    /// Why it is missing (not built with the feature, library absent, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Facts about IAA/QAT devices that explain the path chosen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
}

/// The survey as text: a table with one row per backend (status, modes
/// each way, path), then each backend's note, why it is missing, and what
/// the machine says of its devices.
pub fn render_survey(survey: &[Availability]) -> String {
    use std::fmt::Write;
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

/// Tries every known backend and says what is available and why not.
pub fn survey() -> Vec<Availability> {
    NAMES
        .iter()
        .map(|&name| {
            let devices = match name {
                "qpl" => check::iaa_devices(),
                "qat" => check::qat_devices(),
                _ => Vec::new(),
            };
            match open(name) {
                Ok(b) => Availability {
                    name,
                    available: true,
                    capabilities: Some(b.capabilities().clone()),
                    reason: None,
                    devices,
                },
                Err(e) => Availability {
                    name,
                    available: false,
                    capabilities: None,
                    reason: Some(match e {
                        EngineError::Unavailable { reason, .. } => reason,
                        other => other.to_string(),
                    }),
                    devices,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::tabular::cells;

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
