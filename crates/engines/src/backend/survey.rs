//! What this build and machine offer: every known backend opened once
//! ([`survey`]), with its capabilities or why it is missing and what the
//! machine says about IAA and QAT devices (`cannery backends` prints it
//! with `cannery_lab::engine_reports::render_survey`).

use serde::Serialize;

use super::{check, open, Capabilities, EngineError, NAMES};

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
