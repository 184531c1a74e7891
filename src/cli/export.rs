//! `cannery export ...`: writes a table for the Linux iaa_crypto driver
//! (`kernel`, `fixed-kernel`), QPL (`qpl`) or ISA-L (`isal`).
//!
//! Parsing, table loading and file writing only; every format is produced by
//! the `cannery_export` crate.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use cannery_codec::Table;
use cannery_files::output::{write_files, Existing};

use super::{load_table, Output, Privacy};
use cannery_export::qpl::QplExport;
use cannery_export::{c_header, isal, Api, KernelOptions};

/// Export subcommands.
#[derive(Subcommand)]
pub enum ExportCommand {
    /// C header for the Linux iaa_crypto driver: ll/d arrays, implied block
    /// header with its bit count and gen_decomp_table_flags, guards and a
    /// registration function.
    Kernel(KernelArgs),
    /// The kernel's fixed-mode arrays (fixed_ll_sym/fixed_d_sym values) as a
    /// header; the same as `export kernel --table fixed --name fixed`.
    FixedKernel(FixedKernelArgs),
    /// Counts for QPL's histogram route (316 little-endian u32) plus a
    /// FILE.json sidecar with provenance.
    Qpl(QplArgs),
    /// ISA-L `struct isal_hufftables` initializer (C source) for the stock
    /// library (link -lisal, no -D options); the table must code all 286 + 30
    /// symbols and keep igzip's 56-bit rule.
    Isal(IsalArgs),
}

/// Registration forms, by CLI name.
const API_NAMES: [&str; 3] = ["mainline", "header-table", "builtin"];

fn api_parser() -> impl clap::builder::TypedValueParser<Value = Api> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(API_NAMES)
        .map(|s| s.parse::<Api>().expect("a possible value"))
}

/// Where a C file goes: `-o FILE` or standard output.
#[derive(Args)]
pub struct TextOut {
    /// Output file (default: standard output).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(short = 'f', long)]
    force: bool,
}

impl TextOut {
    fn write(&self, text: &str) -> anyhow::Result<()> {
        let path = self.out.as_deref().unwrap_or(Path::new("-"));
        let mut o = Output::open(path, Existing::replace_if(self.force), &[], Privacy::Normal)?;
        std::io::Write::write_all(&mut o, text.as_bytes())?;
        Ok(o.finish()?)
    }
}

/// Arguments of `export kernel`.
#[derive(Args)]
pub struct KernelArgs {
    /// Table file (JSON or binary) or built-in name (fixed, kernel-2024).
    #[arg(long)]
    table: String,
    /// Prefix of the C identifiers and the mode name (a C identifier).
    #[arg(long)]
    name: String,
    /// add_iaa_compression_mode() form: mainline (7 arguments), header-table
    /// (10 arguments, canned patches) or builtin (batching-era driver).
    #[arg(long, default_value = "header-table", value_parser = api_parser())]
    api: Api,
    #[command(flatten)]
    out: TextOut,
}

/// Arguments of `export fixed-kernel`.
#[derive(Args)]
pub struct FixedKernelArgs {
    /// Prefix of the C identifiers and the mode name.
    #[arg(long, default_value = "fixed")]
    name: String,
    /// add_iaa_compression_mode() form.
    #[arg(long, default_value = "header-table", value_parser = api_parser())]
    api: Api,
    #[command(flatten)]
    out: TextOut,
}

/// Arguments of `export qpl`.
#[derive(Args)]
pub struct QplArgs {
    /// Table file (JSON or binary) or built-in name.
    #[arg(long)]
    table: String,
    /// Counts file to write; the sidecar goes to FILE.json.
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Replace the output files if they exist.
    #[arg(short = 'f', long)]
    force: bool,
}

/// Arguments of `export isal`.
#[derive(Args)]
pub struct IsalArgs {
    /// Table file (JSON or binary) or built-in name.
    #[arg(long)]
    table: String,
    /// Name of the `struct isal_hufftables` variable (a C identifier).
    #[arg(long, default_value = "cannery_hufftables")]
    name: String,
    #[command(flatten)]
    out: TextOut,
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
            a.out.write(&text)
        }
        ExportCommand::FixedKernel(a) => {
            let opts = KernelOptions::new(a.name).with_api(a.api);
            a.out
                .write(&c_header::kernel_header(&Table::fixed(), &opts)?)
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
            a.out.write(&text)?;
            let form = isal::IsalTables::new(&table)?.header_form_lines().join(" ");
            crate::cli::out::status(format!("export isal: {form}"));
            Ok(())
        }
    }
}
