//! `cannery compress` and `cannery decompress`: 4 KiB pages (a raw pages
//! file, a snapshot, a pipe or `-`) to the `records` interchange form and
//! back, in any mode and format, streamed a page at a time
//! (`cannery_codec::transcode`). Outputs are atomic files or `-`.

use super::load_table;
use crate::cli::{open_output, Privacy};
use anyhow::{bail, Context};
use cannery_capture::stream::page_stream;
use cannery_cli::codec::{CompressArgs, DecompressArgs};
use cannery_codec::transcode::{compress_pages, decompress_records};
use cannery_codec::{Decoder, Encoder, Format, Mode};
use std::io::{BufReader, Read};
use std::path::Path;

pub fn compress(args: CompressArgs) -> anyhow::Result<()> {
    let table = match (&args.table, args.mode) {
        (Some(t), Mode::Canned) => Some(load_table(t)?),
        (Some(_), _) => bail!(
            "--table is for canned mode; {} mode uses no table",
            args.mode
        ),
        (None, Mode::Canned) => bail!("canned mode needs --table (a table file, or kernel-2024)"),
        (None, _) => None,
    };
    let format = Format::for_mode(args.mode, args.format).map_err(anyhow::Error::msg)?;
    if args.json && args.out == Path::new("-") {
        bail!("--json prints on standard output; write the records with --out FILE");
    }
    let mut encoder = Encoder::new(args.mode, format, args.level, table.as_ref())?;
    let pages = page_stream(&args.input)?;
    let mut out = open_output(&args.out, args.force, &[&args.input], Privacy::Private)?;
    let s = compress_pages(&mut encoder, pages, &mut out)?;
    out.finish()?;
    if args.json {
        let v = serde_json::json!({
            "pages": s.pages, "stored_bytes": s.stored_bytes, "ratio": cannery_lab::figures::ratio(s.pages, s.stored_bytes),
            "incompressible_pages": s.incompressible_pages, "mode": args.mode.name(),
            "format": format.name(), "level": args.level.name(),
            "table_id": table.as_ref().map(|t| t.id()),
        });
        outln!("{v}")?;
    } else {
        crate::cli::out::status(format!(
            "{} pages -> {} bytes (ratio {:.3}), {} incompressible (stored raw)",
            s.pages,
            s.stored_bytes,
            cannery_lab::figures::ratio(s.pages, s.stored_bytes),
            s.incompressible_pages
        ));
    }
    Ok(())
}

pub fn decompress(args: DecompressArgs) -> anyhow::Result<()> {
    let table = args.table.as_deref().map(load_table).transpose()?;
    let decoder = Decoder::new(args.mode, args.format, table.as_ref()).context(
        "canned streams in iaa format need --table (the table they were compressed with)",
    )?;
    let input: Box<dyn Read> = if args.input == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let f = cannery_files::input::open_input(&args.input, "cannot open")?;
        Box::new(BufReader::new(f))
    };
    let mut out = open_output(&args.out, args.force, &[&args.input], Privacy::Private)?;
    let records = decompress_records(
        &decoder,
        input,
        &mut out,
        args.max_output.map(|n| n as usize),
    )
    .with_context(|| format!("decoding {}", args.input.display()))?;
    out.finish()?;
    crate::cli::out::status(format!("{records} records decoded"));
    Ok(())
}
