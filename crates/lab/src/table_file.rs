//! Tables as command arguments: a file (JSON or binary, read bounded) or a
//! built-in by name, and a table written by its file name's extension.

use std::path::{Path, PathBuf};

use cannery_codec::table::SerialError;
use cannery_codec::Table;
use cannery_files::input::{read_limited, SMALL_FILE_LIMIT};
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
