//! The two on-disk forms of a table, read and written here only.
//!
//! **JSON** (`*.table.json`), for people and tools:
//! ```json
//! {
//!   "format": "cannery-table", "version": 1,
//!   "id": "ac1914dee4c385cd", "name": "python",
//!   "litlen_lengths": [286 integers 0..=15], "dist_lengths": [30 integers 0..=15],
//!   "provenance": { "source": "...", "corpus": "...", "created": "...",
//!                   "generator": "cannery 0.1.0", "training": {...}, "ratios": {"canned": 2.9} }
//! }
//! ```
//! **Binary** (332 bytes): magic `CNTB`, format version (u8, = 1), three zero
//! bytes, the 8-byte id, then the 286 literal/length and 30 distance lengths
//! (one byte each). Provenance is not kept in the binary form.
//!
//! On load the id (if present) is recomputed from the lengths and must match,
//! so a damaged file is an error, not a different table.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Table, TableError};
use crate::constants::{NUM_DIST, NUM_LITLEN};

/// Format name in the JSON form.
pub const JSON_FORMAT: &str = "cannery-table";
/// Current version of both forms.
pub const VERSION: u32 = 1;
/// Magic of the binary form.
pub const BINARY_MAGIC: [u8; 4] = *b"CNTB";
/// Size of the binary form.
pub const BINARY_LEN: usize = 16 + NUM_LITLEN + NUM_DIST;

/// Where a table came from: enough to tell which data a stored page needs
/// and whether the table is stale.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    /// Free-form origin ("trained", a patch series, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Corpus (and workload) it was trained on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corpus: Option<String>,
    /// Creation time, RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// Program and version that made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Training parameters.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub training: serde_json::Map<String, serde_json::Value>,
    /// Measured ratios by mode, on held-out pages.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ratios: BTreeMap<String, f64>,
}

/// Why a serialized table could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SerialError {
    /// Not valid JSON, or JSON of another shape.
    #[error("table JSON is malformed: {0}")]
    Json(String),
    /// Neither JSON nor the binary form.
    #[error("not a cannery table (expected JSON or the 332-byte binary form starting with CNTB)")]
    UnknownFormat,
    /// A format name other than `cannery-table`.
    #[error("JSON format is {0:?}, expected \"cannery-table\"")]
    WrongFormat(String),
    /// A version this build does not read.
    #[error("table format version {0} is not supported (this build reads version 1)")]
    UnsupportedVersion(u32),
    /// The binary form has the wrong size.
    #[error("binary table is {found} bytes, expected {expected}")]
    WrongSize {
        /// Bytes required.
        expected: usize,
        /// Bytes found.
        found: usize,
    },
    /// The stored id does not match the lengths: the file is damaged or edited.
    #[error("table id {stored} does not match its lengths (which hash to {computed}): damaged or edited file")]
    IdMismatch {
        /// The id in the file.
        stored: String,
        /// The id of the lengths in the file.
        computed: String,
    },
    /// The lengths are not a valid table.
    #[error(transparent)]
    Table(#[from] TableError),
}

#[derive(Serialize, Deserialize)]
struct JsonTable {
    format: String,
    version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    litlen_lengths: Vec<u8>,
    dist_lengths: Vec<u8>,
    #[serde(default)]
    provenance: Provenance,
}

impl Table {
    /// The JSON form, pretty-printed, ending in a newline.
    pub fn to_json(&self) -> String {
        let j = JsonTable {
            format: JSON_FORMAT.into(),
            version: VERSION,
            id: Some(self.id()),
            name: self.name.clone(),
            litlen_lengths: self.lengths().litlen.to_vec(),
            dist_lengths: self.lengths().dist.to_vec(),
            provenance: self.provenance.clone(),
        };
        let mut s = serde_json::to_string_pretty(&j).expect("a table always serializes");
        s.push('\n');
        s
    }

    /// Reads the JSON form.
    pub fn from_json(text: &str) -> Result<Table, SerialError> {
        let j: JsonTable =
            serde_json::from_str(text).map_err(|e| SerialError::Json(e.to_string()))?;
        if j.format != JSON_FORMAT {
            return Err(SerialError::WrongFormat(j.format));
        }
        if j.version != VERSION {
            return Err(SerialError::UnsupportedVersion(j.version));
        }
        let mut t = Table::from_lengths(&j.litlen_lengths, &j.dist_lengths)?;
        if let Some(stored) = j.id {
            let computed = t.id();
            if stored != computed {
                return Err(SerialError::IdMismatch { stored, computed });
            }
        }
        t.name = j.name;
        t.provenance = j.provenance;
        Ok(t)
    }

    /// The 332-byte binary form.
    pub fn to_binary(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(BINARY_LEN);
        b.extend_from_slice(&BINARY_MAGIC);
        b.push(VERSION as u8);
        b.extend_from_slice(&[0, 0, 0]);
        let id = self.id();
        for i in 0..8 {
            b.push(u8::from_str_radix(&id[2 * i..2 * i + 2], 16).expect("hex id"));
        }
        b.extend_from_slice(&self.lengths().to_bytes());
        b
    }

    /// Reads the binary form.
    pub fn from_binary(bytes: &[u8]) -> Result<Table, SerialError> {
        if bytes.len() < 5 || bytes[..4] != BINARY_MAGIC {
            return Err(SerialError::UnknownFormat);
        }
        if bytes[4] as u32 != VERSION {
            return Err(SerialError::UnsupportedVersion(bytes[4] as u32));
        }
        if bytes.len() != BINARY_LEN {
            return Err(SerialError::WrongSize {
                expected: BINARY_LEN,
                found: bytes.len(),
            });
        }
        let t = Table::from_lengths(&bytes[16..16 + NUM_LITLEN], &bytes[16 + NUM_LITLEN..])?;
        let stored: String = bytes[8..16].iter().map(|b| format!("{b:02x}")).collect();
        let computed = t.id();
        if stored != computed {
            return Err(SerialError::IdMismatch { stored, computed });
        }
        Ok(t)
    }

    /// Reads either form, telling them apart by their first bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Table, SerialError> {
        if bytes.starts_with(&BINARY_MAGIC) {
            return Table::from_binary(bytes);
        }
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => {
                let text =
                    std::str::from_utf8(bytes).map_err(|e| SerialError::Json(e.to_string()))?;
                Table::from_json(text)
            }
            _ => Err(SerialError::UnknownFormat),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_keeps_lengths_name_and_provenance() {
        let mut t = Table::kernel_2024();
        t.provenance.corpus = Some("fleet-snapshots/python".into());
        t.provenance.ratios.insert("canned".into(), 2.88);
        t.provenance.training.insert("level".into(), "fast".into());
        let text = t.to_json();
        let back = Table::from_json(&text).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.name, t.name);
        assert_eq!(back.provenance, t.provenance);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["id"], t.id());
        assert_eq!(v["litlen_lengths"].as_array().unwrap().len(), 286);
        assert_eq!(v["dist_lengths"].as_array().unwrap().len(), 30);
    }

    #[test]
    fn binary_round_trip_and_layout() {
        let t = Table::kernel_2024();
        let b = t.to_binary();
        assert_eq!(b.len(), 332);
        assert_eq!(&b[..8], b"CNTB\x01\0\0\0");
        assert_eq!(b[16], 5); // literal 0 has length 5 in the 2024 table
        assert_eq!(Table::from_bytes(&b).unwrap(), t);
    }

    #[test]
    fn damage_is_detected() {
        let t = Table::kernel_2024();
        let mut b = t.to_binary();
        b[20] ^= 1;
        assert!(matches!(
            Table::from_binary(&b),
            Err(SerialError::IdMismatch { .. }) | Err(SerialError::Table(_))
        ));
        assert!(matches!(
            Table::from_binary(&b[..100]),
            Err(SerialError::WrongSize { .. })
        ));
        let mut b = t.to_binary();
        b[4] = 9;
        assert!(matches!(
            Table::from_binary(&b),
            Err(SerialError::UnsupportedVersion(9))
        ));
        let text = t.to_json().replace(&t.id(), "0000000000000000");
        assert!(matches!(
            Table::from_json(&text),
            Err(SerialError::IdMismatch { .. })
        ));
        assert!(matches!(
            Table::from_json("{\"format\":1}"),
            Err(SerialError::Json(_))
        ));
        assert!(matches!(
            Table::from_bytes(b"hello"),
            Err(SerialError::UnknownFormat)
        ));
    }
}
