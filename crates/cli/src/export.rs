//! Arguments of `cannery export kernel`, `fixed-kernel`, `qpl` and `isal`.

use cannery_export::Api;
use clap::{Args, Subcommand};
use std::path::PathBuf;

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
pub const API_NAMES: [&str; 3] = ["mainline", "header-table", "builtin"];

/// `--api`: one of [`API_NAMES`].
pub fn api_parser() -> impl clap::builder::TypedValueParser<Value = Api> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(API_NAMES)
        .map(|s| s.parse::<Api>().expect("a possible value"))
}

/// Where a C file goes: `-o FILE` or standard output.
#[derive(Args)]
pub struct TextOut {
    /// Output file (default: standard output).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(short = 'f', long)]
    pub force: bool,
}

/// Arguments of `export kernel`.
#[derive(Args)]
pub struct KernelArgs {
    /// Table file (JSON or binary) or built-in name (fixed, kernel-2024).
    #[arg(long)]
    pub table: String,
    /// Prefix of the C identifiers and the mode name (a C identifier).
    #[arg(long)]
    pub name: String,
    /// add_iaa_compression_mode() form: mainline (7 arguments), header-table
    /// (10 arguments, canned patches) or builtin (batching-era driver).
    #[arg(long, default_value = "header-table", value_parser = api_parser())]
    pub api: Api,
    /// Where the output goes.
    #[command(flatten)]
    pub out: TextOut,
}

/// Arguments of `export fixed-kernel`.
#[derive(Args)]
pub struct FixedKernelArgs {
    /// Prefix of the C identifiers and the mode name.
    #[arg(long, default_value = "fixed")]
    pub name: String,
    /// add_iaa_compression_mode() form.
    #[arg(long, default_value = "header-table", value_parser = api_parser())]
    pub api: Api,
    /// Where the output goes.
    #[command(flatten)]
    pub out: TextOut,
}

/// Arguments of `export qpl`.
#[derive(Args)]
pub struct QplArgs {
    /// Table file (JSON or binary) or built-in name.
    #[arg(long)]
    pub table: String,
    /// Counts file to write; the sidecar goes to FILE.json.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Replace the output files if they exist.
    #[arg(short = 'f', long)]
    pub force: bool,
}

/// Arguments of `export isal`.
#[derive(Args)]
pub struct IsalArgs {
    /// Table file (JSON or binary) or built-in name.
    #[arg(long)]
    pub table: String,
    /// Name of the `struct isal_hufftables` variable (a C identifier).
    #[arg(long, default_value = "cannery_hufftables")]
    pub name: String,
    /// Where the output goes.
    #[command(flatten)]
    pub out: TextOut,
}
