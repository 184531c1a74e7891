//! `cannery compress` and `cannery decompress`: pages to records and back.

use clap::Args;

#[derive(Args)]
pub struct CompressArgs {}

#[derive(Args)]
pub struct DecompressArgs {}

pub fn compress(_args: CompressArgs) -> anyhow::Result<()> {
    anyhow::bail!("compress: not built yet")
}

pub fn decompress(_args: DecompressArgs) -> anyhow::Result<()> {
    anyhow::bail!("decompress: not built yet")
}
