//! `cannery export ...`: writes a table for the Linux iaa_crypto driver
//! (`kernel`, `fixed-kernel`), QPL (`qpl`) or ISA-L (`isal`).
//!
//! Parsing, table loading and file writing only; every format is produced by
//! the `cannery_export` crate.

use super::{load_table, Privacy};
use cannery_cli::export::{ExportCommand, TextOut};
use cannery_codec::Table;
use cannery_export::qpl::QplExport;
use cannery_export::{c_header, isal, KernelOptions};
use cannery_files::output::{write_files, Existing};
use std::path::Path;

/// Writes `text` to `-o FILE` or standard output.
fn write_text(out: &TextOut, text: &str) -> anyhow::Result<()> {
    let path = out.out.as_deref().unwrap_or(Path::new("-"));
    let mut o = super::open_output(path, out.force, &[], Privacy::Normal)?;
    std::io::Write::write_all(&mut o, text.as_bytes())?;
    Ok(o.finish()?)
}

/// Runs an export subcommand.
pub fn run(cmd: ExportCommand) -> anyhow::Result<()> {
    match cmd {
        ExportCommand::Kernel(a) => {
            let table = load_table(&a.table)?;
            let opts = KernelOptions::new(a.name).with_api(a.api);
            let text = c_header::kernel_header(&table, &opts)?;
            if let Some(note) = c_header::api_note(&table, a.api) {
                crate::cli::out::status(format!("note: {note}"));
            }
            write_text(&a.out, &text)
        }
        ExportCommand::FixedKernel(a) => {
            let opts = KernelOptions::new(a.name).with_api(a.api);
            write_text(&a.out, &c_header::kernel_header(&Table::fixed(), &opts)?)
        }
        ExportCommand::Qpl(a) => {
            let table = load_table(&a.table)?;
            let q = QplExport::new(&table)?;
            let sidecar = QplExport::sidecar_path(&a.out);
            // Both files or neither.
            let sidecar_json = q.sidecar_json(&table, &cannery_export::default_generator());
            write_files(
                &[
                    (a.out.clone(), q.counts_bytes()),
                    (sidecar.clone(), sidecar_json.into_bytes()),
                ],
                Existing::replace_if(a.force),
            )?;
            crate::cli::out::status(format!(
                "wrote {} (316 little-endian u32 counts) and {}",
                a.out.display(),
                sidecar.display()
            ));
            Ok(())
        }
        ExportCommand::Isal(a) => {
            let table = load_table(&a.table)?;
            let text = isal::hufftables_c(&table, &a.name, &cannery_export::default_generator())?;
            write_text(&a.out, &text)?;
            let form = isal::IsalTables::new(&table)?.header_form_lines().join(" ");
            crate::cli::out::status(format!("export isal: {form}"));
            Ok(())
        }
    }
}
