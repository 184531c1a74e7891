//! Per-page speed and ratio of cannery's modes and the peer compressors on
//! the same pages, in the same run: what `cannery bench` reports.
//!
//! Each codec compresses every page on its own and decompresses it again;
//! the round trip is verified. A page's time is the fastest of a few
//! repetitions (the machine is shared and noisy; the minimum is the least
//! disturbed figure), and the report gives the median and 99th percentile
//! over pages. Figures are meant to be read as ratios between codecs of the
//! same run, never as absolute speeds. This module measures only; it does
//! not train tables or read corpora.

use std::time::Instant;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome, Table};

use cannery_codec::peer::{Peer, PeerKind};

/// One codec to measure.
#[derive(Clone, Debug)]
pub enum BenchCodec {
    /// A cannery mode: name, mode, format, level, table (canned only).
    Cannery {
        /// Report name, e.g. `canned-fast`.
        name: String,
        /// Mode.
        mode: Mode,
        /// Format.
        format: Format,
        /// Level.
        level: Level,
        /// Table for canned mode.
        table: Option<Box<Table>>,
    },
    /// A peer compressor, with its dictionary when it needs one.
    Peer(PeerKind, Option<Vec<u8>>),
}

impl BenchCodec {
    /// The name in reports and JSON (`canned-fast`, `libdeflate-1`, `lz4`, ...).
    pub fn name(&self) -> String {
        match self {
            BenchCodec::Cannery { name, .. } => name.clone(),
            BenchCodec::Peer(k, _) => k.to_string(),
        }
    }
}

/// What one codec did on one workload's pages.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BenchResult {
    /// Workload name.
    pub workload: String,
    /// Codec name.
    pub codec: String,
    /// Pages measured (compressed pages; same-filled pages are not among them).
    pub pages: usize,
    /// Uncompressed bytes / stored bytes, incompressible pages stored as 4096.
    pub ratio: f64,
    /// As `ratio`, but also counting the workload's same-filled pages, which
    /// zswap stores without compression (as 0 bytes here).
    pub effective_ratio: f64,
    /// Pages whose stream would be 4096 bytes or more (stored raw).
    pub incompressible_pages: usize,
    /// Median compress time per page, ns.
    pub compress_ns_p50: u64,
    /// 99th percentile compress time per page, ns.
    pub compress_ns_p99: u64,
    /// Median decompress time per page, ns (compressible pages only).
    pub decompress_ns_p50: u64,
    /// 99th percentile decompress time per page, ns.
    pub decompress_ns_p99: u64,
    /// Uncompressed MB/s of compression over all pages.
    pub compress_mb_s: f64,
    /// Uncompressed MB/s of decompression over compressible pages.
    pub decompress_mb_s: f64,
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A codec could not be set up.
    #[error("{codec}: {message}")]
    Setup {
        /// Codec name.
        codec: String,
        /// What went wrong.
        message: String,
    },
    /// A page did not come back as it went in: a codec bug, never expected.
    #[error("{codec}: page {page} of {workload} did not round-trip ({message})")]
    RoundTrip {
        /// Codec name.
        codec: String,
        /// Workload name.
        workload: String,
        /// Page index.
        page: usize,
        /// What happened.
        message: String,
    },
}

enum Engine {
    Cannery(Box<Encoder>, Decoder),
    Peer(Box<Peer>),
}

fn engine(codec: &BenchCodec) -> Result<Engine, BenchError> {
    let setup = |m: String| BenchError::Setup {
        codec: codec.name(),
        message: m,
    };
    Ok(match codec {
        BenchCodec::Cannery {
            mode,
            format,
            level,
            table,
            ..
        } => {
            let enc = Encoder::new(*mode, *format, *level, table.as_deref())
                .map_err(|e| setup(e.to_string()))?;
            let dec = Decoder::new(*mode, *format, table.as_deref())
                .ok_or_else(|| setup("canned mode needs a table".into()))?;
            Engine::Cannery(Box::new(enc), dec)
        }
        BenchCodec::Peer(kind, dict) => Engine::Peer(Box::new(
            Peer::new(kind.clone(), dict.as_deref()).map_err(|e| setup(e.to_string()))?,
        )),
    })
}

/// Percentile `p` (0..=100) of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p / 100.0).round() as usize;
    sorted[i]
}

/// Measures `codec` on `pages` (each exactly 4096 bytes) of one workload;
/// `same_filled` is the workload's count of same-filled pages (for the
/// effective ratio). Each page is timed `reps` times and its fastest time kept.
pub fn bench_codec(
    workload: &str,
    codec: &BenchCodec,
    pages: &[Vec<u8>],
    same_filled: u64,
    reps: usize,
) -> Result<BenchResult, BenchError> {
    let mut engine = engine(codec)?;
    let reps = reps.max(1);
    let mut out = Vec::with_capacity(2 * PAGE_SIZE);
    let mut back = vec![0u8; PAGE_SIZE];
    let (mut ctimes, mut dtimes) = (
        Vec::with_capacity(pages.len()),
        Vec::with_capacity(pages.len()),
    );
    let (mut stored, mut incompressible) = (0u64, 0usize);
    let round_trip = |page: usize, message: String| BenchError::RoundTrip {
        codec: codec.name(),
        workload: workload.to_string(),
        page,
        message,
    };
    for (i, page) in pages.iter().enumerate() {
        let mut best = u64::MAX;
        let mut size = None;
        for _ in 0..reps {
            let t = Instant::now();
            size = match &mut engine {
                Engine::Cannery(enc, _) => match enc.compress(page, &mut out) {
                    Ok(Outcome::Compressed(n)) => Some(n),
                    Ok(Outcome::Incompressible) => None,
                    Err(e) => return Err(round_trip(i, e.to_string())),
                },
                Engine::Peer(p) => p
                    .compress(page, &mut out)
                    .map_err(|e| round_trip(i, e.to_string()))?,
            };
            best = best.min(t.elapsed().as_nanos() as u64);
        }
        ctimes.push(best);
        let Some(n) = size else {
            incompressible += 1;
            stored += PAGE_SIZE as u64;
            continue;
        };
        stored += n as u64;
        let mut best = u64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            let got = match &mut engine {
                Engine::Cannery(_, dec) => dec
                    .decompress(&out[..n], &mut back)
                    .map_err(|e| e.to_string()),
                Engine::Peer(p) => p
                    .decompress(&out[..n], &mut back)
                    .map_err(|e| e.to_string()),
            };
            best = best.min(t.elapsed().as_nanos() as u64);
            match got {
                Ok(m) if m == PAGE_SIZE && back == *page => {}
                Ok(m) => {
                    return Err(round_trip(
                        i,
                        format!("decoded {m} bytes that differ from the page"),
                    ))
                }
                Err(e) => return Err(round_trip(i, e)),
            }
        }
        dtimes.push(best);
    }
    let bytes = (pages.len() * PAGE_SIZE) as f64;
    let ctotal: u64 = ctimes.iter().sum();
    let dtotal: u64 = dtimes.iter().sum();
    ctimes.sort_unstable();
    dtimes.sort_unstable();
    let ratio = if stored == 0 {
        0.0
    } else {
        bytes / stored as f64
    };
    let effective = if stored == 0 {
        0.0
    } else {
        (bytes + (same_filled as usize * PAGE_SIZE) as f64) / stored as f64
    };
    Ok(BenchResult {
        workload: workload.to_string(),
        codec: codec.name(),
        pages: pages.len(),
        ratio,
        effective_ratio: effective,
        incompressible_pages: incompressible,
        compress_ns_p50: percentile(&ctimes, 50.0),
        compress_ns_p99: percentile(&ctimes, 99.0),
        decompress_ns_p50: percentile(&dtimes, 50.0),
        decompress_ns_p99: percentile(&dtimes, 99.0),
        compress_mb_s: if ctotal == 0 {
            0.0
        } else {
            bytes / ctotal as f64 * 1e3
        },
        decompress_mb_s: if dtotal == 0 {
            0.0
        } else {
            (dtimes.len() * PAGE_SIZE) as f64 / dtotal as f64 * 1e3
        },
    })
}

/// The codecs `cannery bench` compares: cannery's modes with `table` (the
/// workload's own trained table) and the kernel's 2024 table, and the peers;
/// `zstd_dict` is a dictionary trained on the same training pages.
pub fn standard_codecs(table: &Table, zstd_dict: Option<Vec<u8>>) -> Vec<BenchCodec> {
    let cannery = |name: &str, mode, level, table: Option<&Table>| BenchCodec::Cannery {
        name: name.to_string(),
        mode,
        format: Format::Iaa,
        level,
        table: table.cloned().map(Box::new),
    };
    let kernel = Table::kernel_2024();
    let mut v = vec![
        cannery("canned-fast", Mode::Canned, Level::Fast, Some(table)),
        cannery("canned-default", Mode::Canned, Level::Default, Some(table)),
        cannery("canned-best", Mode::Canned, Level::Best, Some(table)),
        cannery(
            "canned-kernel2024-fast",
            Mode::Canned,
            Level::Fast,
            Some(&kernel),
        ),
        cannery("fixed-fast", Mode::Fixed, Level::Fast, None),
        cannery("dynamic-default", Mode::Dynamic, Level::Default, None),
        cannery("dynamic-best", Mode::Dynamic, Level::Best, None),
    ];
    for kind in [
        PeerKind::Libdeflate(1),
        PeerKind::Libdeflate(6),
        PeerKind::Miniz(1),
        PeerKind::Miniz(6),
        PeerKind::Zlib(6),
        PeerKind::Zstd(1),
        PeerKind::Zstd(3),
        PeerKind::Lz4,
        PeerKind::Lz4Flex,
    ] {
        v.push(BenchCodec::Peer(kind, None));
    }
    if let Some(d) = zstd_dict {
        v.push(BenchCodec::Peer(PeerKind::ZstdDict(1), Some(d)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages() -> Vec<Vec<u8>> {
        (0..8u32)
            .map(|k| {
                (0..PAGE_SIZE as u32)
                    .map(|i| {
                        if i % 97 < 60 {
                            (i / 97 + k) as u8
                        } else {
                            (i * 31 + k) as u8
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_standard_codec_round_trips_and_reports() {
        let p = pages();
        let refs: Vec<&[u8]> = p.iter().map(|x| &x[..]).collect();
        let dict = cannery_codec::peer::train_zstd_dictionary(&refs, 2048);
        for c in standard_codecs(&Table::kernel_2024(), dict) {
            let r = bench_codec("w", &c, &p, 2, 1).unwrap();
            assert_eq!(r.pages, 8);
            assert!(r.ratio > 1.0, "{}: {}", r.codec, r.ratio);
            // Two same-filled pages more, stored as nothing: effective > ratio.
            assert!((r.effective_ratio / r.ratio - 10.0 / 8.0).abs() < 1e-9);
            assert!(r.compress_ns_p50 <= r.compress_ns_p99);
        }
    }

    #[test]
    fn a_broken_codec_is_reported_not_hidden() {
        // A canned table that cannot code every literal is refused up front.
        let mut l = *Table::kernel_2024().lengths();
        l.litlen[9] = 0;
        let t = Table::from_lengths(&l.litlen, &l.dist).unwrap();
        let c = standard_codecs(&t, None).remove(0);
        assert!(matches!(
            bench_codec("w", &c, &pages(), 0, 1),
            Err(BenchError::Setup { .. })
        ));
    }

    #[test]
    fn percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 51);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&[], 50.0), 0);
    }
}
