//! What this build and machine offer: every known backend opened once
//! ([`survey`]), with its capabilities or why it is missing and what the
//! machine says about IAA and QAT devices, and that survey as text
//! ([`render_survey`], what `cannery backends` prints).

use serde::Serialize;

use super::{check, open, BackendError, Capabilities, NAMES};
use crate::mode::Mode;

/// Whether a backend can be opened here, and why not.
#[derive(Clone, Debug, Serialize)]
pub struct Availability {
    /// Backend name.
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

/// The survey as text: one row per backend (status, modes each way, path),
/// then its note, why it is missing, and what the machine says of devices.
pub fn render_survey(survey: &[Availability]) -> String {
    use std::fmt::Write;
    let modes = |m: &[Mode]| -> String {
        if m.is_empty() {
            "-".into()
        } else {
            m.iter().map(|m| m.name()).collect::<Vec<_>>().join(",")
        }
    };
    let mut out = format!(
        "{:<12} {:<10} {:<22} {:<22} {:<9}\n",
        "backend", "status", "compresses", "decompresses", "path"
    );
    for a in survey {
        match &a.capabilities {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "{:<12} {:<10} {:<22} {:<22} {:<9}",
                    a.name,
                    "available",
                    modes(&c.compress),
                    modes(&c.decompress),
                    c.path.name()
                );
                if let Some(n) = &c.path_note {
                    let _ = writeln!(out, "{:<12} note: {n}", "");
                }
            }
            None => {
                let _ = writeln!(out, "{:<12} {:<10}", a.name, "missing");
                if let Some(r) = &a.reason {
                    let _ = writeln!(out, "{:<12} why: {r}", "");
                }
            }
        }
        for d in &a.devices {
            let _ = writeln!(out, "{:<12} device: {d}", "");
        }
    }
    out
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
                        BackendError::Unavailable { reason, .. } => reason,
                        other => other.to_string(),
                    }),
                    devices,
                },
            }
        })
        .collect()
}
