//! `cannery table ...`: show a table (`cannery_lab::table_summary`),
//! import one from raw lengths or a kernel C header (parsed and
//! cross-checked by `cannery_export::import`), or write a built-in one.

use super::{load_table, write_table};
use cannery_cli::table::TableCommand;
use cannery_codec::Table;
use cannery_lab::table_file;
use cannery_lab::table_summary::TableSummary;

pub fn run(cmd: TableCommand) -> anyhow::Result<()> {
    match cmd {
        TableCommand::Show { table, json } => {
            let s = TableSummary::of(&load_table(&table)?);
            crate::cli::print_report(json, &s, |r| r.render_text())?;
            Ok(())
        }
        TableCommand::Import {
            from,
            file,
            out,
            force,
            name,
        } => {
            cannery_files::output::refuse_same_file(&[&file], &out)?;
            let mut t = if from == "kernel-header" {
                let t = table_file::import_kernel_header(&file)?;
                let name = t.name.as_deref().unwrap_or("unnamed");
                let (id, file) = (t.id(), file.display());
                crate::cli::out::status(format!("imported table {id} ({name}) from {file}"));
                t
            } else {
                let t = table_file::import_lengths(&file)?;
                let (id, out) = (t.id(), out.display());
                crate::cli::out::status(format!("table {id} written to {out}"));
                t
            };
            if name.is_some() {
                t.name = name;
            }
            write_table(&t, &out, force)
        }
        TableCommand::Builtin { which, out, force } => {
            let t = Table::builtin(&which).expect("clap checked the name");
            write_table(&t, &out, force)?;
            crate::cli::out::status(format!(
                "table {} ({which}) written to {}",
                t.id(),
                out.display()
            ));
            Ok(())
        }
    }
}
