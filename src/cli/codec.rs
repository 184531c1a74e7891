//! `cannery compress` and `cannery decompress`: a file of 4 KiB pages to the
//! `records` interchange form and back, in any mode and format.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::records::{RecordReader, RecordWriter};
use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome};
use clap::Args;

use super::load_table;

#[derive(Args)]
pub struct CompressArgs {
    /// Table for canned mode: a file (JSON or binary) or a built-in name (kernel-2024).
    #[arg(long)]
    table: Option<String>,
    /// canned, fixed or dynamic.
    #[arg(long)]
    mode: Mode,
    /// Canned framing: iaa (no header) or deflate (header + body, standard raw deflate).
    #[arg(long, default_value = "iaa")]
    format: Format,
    /// Match finding effort: fast, default or best.
    #[arg(long, default_value = "fast")]
    level: Level,
    /// Input: raw pages (length a multiple of 4096).
    #[arg(long = "in")]
    input: PathBuf,
    /// Output form (only `records`: u32 LE length, then the bytes; 4096 = raw page).
    #[arg(long, default_value = "records", value_parser = ["records"])]
    emit: String,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct DecompressArgs {
    /// Table for canned mode in iaa format: a file or a built-in name.
    #[arg(long)]
    table: Option<String>,
    /// canned, fixed or dynamic.
    #[arg(long)]
    mode: Mode,
    /// Canned framing: iaa or deflate.
    #[arg(long, default_value = "iaa")]
    format: Format,
    /// Input: records.
    #[arg(long = "in")]
    input: PathBuf,
    /// Allow each record to decode to any length up to N bytes (general data);
    /// without it every record must decode to exactly one 4096-byte page.
    #[arg(long)]
    max_output: Option<usize>,
    /// Output file: decoded bytes back to back.
    #[arg(long)]
    out: PathBuf,
}

pub fn compress(args: CompressArgs) -> anyhow::Result<()> {
    let table = match (&args.table, args.mode) {
        (Some(t), _) => Some(load_table(t)?),
        (None, Mode::Canned) => bail!("canned mode needs --table (a table file, or kernel-2024)"),
        (None, _) => None,
    };
    let mut encoder = Encoder::new(args.mode, args.format, args.level, table.as_ref())?;
    let file =
        File::open(&args.input).with_context(|| format!("opening {}", args.input.display()))?;
    let len = file.metadata()?.len();
    if len % PAGE_SIZE as u64 != 0 {
        bail!(
            "{}: {len} bytes is not a whole number of 4096-byte pages (last page has {} bytes)",
            args.input.display(),
            len % PAGE_SIZE as u64
        );
    }
    let mut input = BufReader::new(file);
    let out =
        File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let mut writer = RecordWriter::new(BufWriter::new(out));
    let mut page = vec![0u8; PAGE_SIZE];
    let mut stream = Vec::with_capacity(PAGE_SIZE);
    let (mut pages, mut stored, mut incompressible) = (0u64, 0u64, 0u64);
    for _ in 0..len / PAGE_SIZE as u64 {
        input
            .read_exact(&mut page)
            .with_context(|| format!("reading {}", args.input.display()))?;
        match encoder.compress(&page, &mut stream)? {
            Outcome::Compressed(n) => {
                writer.write(&stream)?;
                stored += n as u64;
            }
            Outcome::Incompressible => {
                writer.write(&page)?;
                stored += PAGE_SIZE as u64;
                incompressible += 1;
            }
        }
        pages += 1;
    }
    writer
        .finish()
        .with_context(|| format!("writing {}", args.out.display()))?;
    let ratio = if stored == 0 {
        0.0
    } else {
        (pages * PAGE_SIZE as u64) as f64 / stored as f64
    };
    if args.json {
        let v = serde_json::json!({
            "pages": pages, "stored_bytes": stored, "ratio": ratio,
            "incompressible_pages": incompressible, "mode": args.mode.name(),
            "format": args.format.name(), "level": args.level.name(),
            "table_id": table.as_ref().filter(|_| args.mode == Mode::Canned).map(|t| t.id()),
        });
        println!("{v}");
    } else {
        eprintln!("{pages} pages -> {stored} bytes (ratio {ratio:.3}), {incompressible} incompressible (stored raw)");
    }
    Ok(())
}

pub fn decompress(args: DecompressArgs) -> anyhow::Result<()> {
    let table = match &args.table {
        Some(t) => Some(load_table(t)?),
        None => None,
    };
    let decoder = Decoder::new(args.mode, args.format, table.as_ref()).context(
        "canned streams in iaa format need --table (the table they were compressed with)",
    )?;
    let file =
        File::open(&args.input).with_context(|| format!("opening {}", args.input.display()))?;
    let out =
        File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let mut out = BufWriter::new(out);
    let limit = args.max_output.unwrap_or(PAGE_SIZE);
    let mut buf = vec![0u8; limit];
    let mut records = 0u64;
    for rec in RecordReader::new(BufReader::new(file)) {
        let rec = rec?;
        let decoded: &[u8] = if rec.is_raw_page() && args.max_output.is_none() {
            &rec.data
        } else {
            let n = decoder.decompress(&rec.data, &mut buf).with_context(|| {
                format!(
                    "record {} (byte offset {}) of {}",
                    rec.index,
                    rec.offset,
                    args.input.display()
                )
            })?;
            if args.max_output.is_none() && n != PAGE_SIZE {
                bail!("record {} (byte offset {}) decodes to {n} bytes, not a 4096-byte page (use --max-output for general data)", rec.index, rec.offset);
            }
            &buf[..n]
        };
        out.write_all(decoded)?;
        records += 1;
    }
    out.flush()
        .with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!("{records} records decoded");
    Ok(())
}
