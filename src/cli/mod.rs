//! Subcommand modules of the `cannery` CLI, one per group, plus the few
//! helpers they share (loading and writing tables).

pub mod capture;
pub mod codec;
pub mod corpus;
pub mod export;
pub mod table;
pub mod zswap_sim;
pub mod train;

use std::path::Path;

use anyhow::Context;
use cannery_codec::Table;

/// Loads a table from a file (JSON or binary), or a built-in by name
/// (`fixed`, `kernel-2024`) when no file of that name exists.
pub fn load_table(spec: &str) -> anyhow::Result<Table> {
    let path = Path::new(spec);
    if !path.exists() {
        if let Some(t) = Table::builtin(spec) {
            return Ok(t);
        }
        anyhow::bail!(
            "table {spec:?}: no such file, and not a built-in table (built-ins: {})",
            Table::BUILTIN_NAMES.join(", ")
        );
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading table {}", path.display()))?;
    Table::from_bytes(&bytes).with_context(|| format!("table {}", path.display()))
}

/// Writes a table: JSON if the path ends in `.json`, else the binary form.
pub fn write_table(table: &Table, path: &Path) -> anyhow::Result<()> {
    let bytes = if path.extension().is_some_and(|e| e == "json") {
        table.to_json().into_bytes()
    } else {
        table.to_binary()
    };
    std::fs::write(path, bytes).with_context(|| format!("writing table {}", path.display()))
}
