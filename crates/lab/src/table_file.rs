//! Tables as command arguments: a file (JSON or binary, read bounded) or a
//! built-in by name, a table imported from a kernel C header or raw
//! lengths, and a table written by its file name's extension.

use std::path::{Path, PathBuf};

use cannery_codec::table::SerialError;
use cannery_codec::Table;
use cannery_files::input::{read_limited, read_text_limited, SMALL_FILE_LIMIT};
use cannery_files::output::{write_file, Existing};

/// Why a table could not be loaded or written.
#[derive(Debug, thiserror::Error)]
pub enum TableFileError {
    /// No file of that name and no built-in either.
    #[error("table {spec:?}: no such file, and not a built-in table (built-ins: {})", Table::BUILTIN_NAMES.join(", "))]
    Unknown {
        /// The name given.
        spec: String,
    },
    /// The file could not be read.
    #[error(transparent)]
    Read(#[from] cannery_files::Error),
    /// The file is no table.
    #[error("table {}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: SerialError,
    },
    /// A C header that is no kernel table.
    #[error("cannot import {}", path.display())]
    Import {
        /// The header.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: cannery_export::ImportError,
    },
    /// A lengths file of the wrong size.
    #[error("{}: {len} bytes; a lengths file is exactly 316 bytes (286 literal/length then 30 distance lengths)", path.display())]
    LengthsSize {
        /// The file.
        path: PathBuf,
        /// Its size.
        len: usize,
    },
    /// Lengths that make no table.
    #[error("{}", path.display())]
    Lengths {
        /// The file.
        path: PathBuf,
        /// Why not.
        #[source]
        source: cannery_codec::TableError,
    },
    /// The table could not be written.
    #[error("writing table {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: cannery_files::Error,
    },
}

/// Loads a table from a file (JSON or binary, at most 16 MiB), or a
/// built-in by name (`fixed`, `kernel-2024`) when nothing of that name
/// exists (not even a dangling or looping link).
pub fn load(spec: &str) -> Result<Table, TableFileError> {
    let path = Path::new(spec);
    if std::fs::symlink_metadata(path).is_err() {
        return Table::builtin(spec).ok_or_else(|| TableFileError::Unknown { spec: spec.into() });
    }
    let bytes = read_limited(path, SMALL_FILE_LIMIT, "table")?;
    Table::from_bytes(&bytes).map_err(|source| TableFileError::Parse {
        path: path.into(),
        source,
    })
}

/// Largest C header [`import_kernel_header`] reads (the kernel's are a few
/// KiB; the scan keeps one token per byte at most, so this bounds its
/// memory too).
pub const HEADER_LIMIT: u64 = 2 << 20;

/// A table from a C header with kernel-format arrays (ours or the 2024
/// patch's; codes, lengths and header cross-checked).
pub fn import_kernel_header(path: &Path) -> Result<Table, TableFileError> {
    let text = read_text_limited(path, HEADER_LIMIT, "C header")?;
    cannery_export::table_from_kernel_header(&text).map_err(|source| TableFileError::Import {
        path: path.into(),
        source,
    })
}

/// A table from a lengths file: 316 raw bytes, 286 literal/length then 30
/// distance code lengths.
pub fn import_lengths(path: &Path) -> Result<Table, TableFileError> {
    let bytes = read_limited(path, 316, "lengths file")?;
    if bytes.len() != 316 {
        return Err(TableFileError::LengthsSize {
            path: path.into(),
            len: bytes.len(),
        });
    }
    let mut t = Table::from_lengths(&bytes[..286], &bytes[286..]).map_err(|source| {
        TableFileError::Lengths {
            path: path.into(),
            source,
        }
    })?;
    t.provenance.source = Some(format!("imported from raw lengths {}", path.display()));
    Ok(t)
}

/// Writes a table atomically: JSON if the path ends in `.json`, else the
/// binary form; an existing file is kept unless `existing` says replace.
pub fn write(table: &Table, path: &Path, existing: Existing) -> Result<(), TableFileError> {
    let bytes = if path.extension().is_some_and(|e| e == "json") {
        table.to_json().into_bytes()
    } else {
        table.to_binary()
    };
    write_file(path, &bytes, existing).map_err(|source| TableFileError::Write {
        path: path.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builtin_by_name_a_file_by_path_and_an_unknown_name_refused() {
        let k = Table::builtin("kernel-2024").unwrap();
        assert_eq!(load("kernel-2024").unwrap().lengths(), k.lengths());
        let err = load("no-such-table").unwrap_err().to_string();
        assert!(
            err.contains("\"no-such-table\": no such file") && err.contains("kernel-2024"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let t = Table::builtin("fixed").unwrap();
        for name in ["t.json", "t.bin"] {
            let p = dir.path().join(name);
            write(&t, &p, Existing::Keep).unwrap();
            assert_eq!(load(p.to_str().unwrap()).unwrap().lengths(), t.lengths());
            assert!(matches!(
                write(&t, &p, Existing::Keep),
                Err(TableFileError::Write { .. })
            ));
        }
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{").unwrap();
        assert!(matches!(
            load(bad.to_str().unwrap()),
            Err(TableFileError::Parse { .. })
        ));
    }
}
