//! Reproducer files of `cannery validate` and `cannery fuzz`: one JSON
//! file per failed check (page, table, engine pair, stream), named by the
//! failure, written atomically into a directory created when needed.

use std::path::Path;

use cannery_engines::backend::check::{FailureCase, Reproducer};
use cannery_files::output::{write_file, Existing};

/// Writes the reproducer of `f` into `dir` (created if needed); returns its
/// path, or nothing without a directory. A reproducer of the same name is
/// replaced (the same failure again).
pub fn write_reproducer(
    dir: Option<&Path>,
    f: &FailureCase<'_>,
) -> Result<Option<String>, cannery_files::Error> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir).map_err(|e| cannery_files::Error::io(dir, "cannot create", e))?;
    let r = Reproducer::of(f);
    let path = dir.join(r.file_name());
    let json = serde_json::to_string_pretty(&r).expect("a reproducer serializes");
    write_file(&path, json.as_bytes(), Existing::Replace)?;
    Ok(Some(path.display().to_string()))
}
