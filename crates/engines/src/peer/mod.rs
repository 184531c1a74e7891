//! The outside compressors zswap users pick (the "peers"), each wrapped once
//! behind one page-at-a-time interface, with its level as a parameter:
//! zstd (with or without a dictionary), lz4 (lz4_flex and liblz4),
//! libdeflate, zlib (through flate2) and miniz_oxide, and the kernel's own
//! zswap compressors ([`kernel`]: `kernel-deflate`, `kernel-lzo`). The evaluation and
//! benchmark reports, the zswap simulator and the batch path all measure
//! them through [`Peer`]; the codec's reference backends
//! (`backend::{zlib, miniz, libdeflate}`) use the same deflate calls
//! ([`deflate`]). Built with the default-on `reference` feature; a library
//! user of the codec can drop it (and these dependencies).
//!
//! Each peer compresses one page on its own (no state carried between pages)
//! and follows zswap's rule: an output of 4096 bytes or more is
//! incompressible. As cannery's own encoder does, zstd, lz4 and lzo write
//! into a buffer the peer keeps and the bytes produced are copied out, and
//! every peer decodes straight into the caller's page: no allocation or
//! zero-filling in a timed call that the library itself does not do (the
//! deflate peers go through the reference engines' own calls). This module
//! does not know about canned tables. Every
//! [`Peer`] is an [`Engine`](crate::engine::Engine), so it runs through
//! [`crate::batch`] (and the zswap model in `cannery_zswap`) like
//! cannery's own encoder and decoder.

pub mod deflate;
pub mod kernel;
pub mod lz4_dict;

use std::fmt;

use crate::backend::reference::Reference;
use crate::engine::{Capabilities, Engine as _, EngineError, ExecPath, Job};
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use deflate::InflateFailure;

/// Which peer compressor, at which level.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PeerKind {
    /// zstd at a level, no dictionary.
    Zstd(i32),
    /// zstd at a level with a dictionary (trained on training pages).
    ZstdDict(i32),
    /// lz4_flex block format (pure Rust).
    Lz4Flex,
    /// liblz4 block format (the C library).
    Lz4,
    /// liblz4 with a dictionary as zram's lz4 backend uses it
    /// ([`lz4_dict`]), acceleration 1 (the kernel's default level).
    Lz4Dict,
    /// libdeflate raw deflate at a level (1..=12).
    Libdeflate(i32),
    /// zlib raw deflate through flate2 at a level (0..=9).
    Zlib(u32),
    /// miniz_oxide raw deflate at a level (0..=10).
    Miniz(u8),
    /// The kernel crypto API's `deflate` as zswap runs it ([`kernel`]).
    KernelDeflate,
    /// The kernel's `lzo` (LZO1X-1; [`kernel`], feature `lzo`).
    KernelLzo,
}

impl fmt::Display for PeerKind {
    /// The name used in reports and JSON, e.g. `zstd-1`, `libdeflate-6`, `lz4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerKind::Zstd(l) => write!(f, "zstd-{l}"),
            PeerKind::ZstdDict(l) => write!(f, "zstd-{l}-dict"),
            PeerKind::Lz4Flex => write!(f, "lz4-flex"),
            PeerKind::Lz4 => write!(f, "lz4"),
            PeerKind::Lz4Dict => write!(f, "lz4-dict"),
            PeerKind::Libdeflate(l) => write!(f, "libdeflate-{l}"),
            PeerKind::Zlib(l) => write!(f, "zlib-{l}"),
            PeerKind::Miniz(l) => write!(f, "miniz-{l}"),
            PeerKind::KernelDeflate => f.write_str("kernel-deflate"),
            PeerKind::KernelLzo => f.write_str("kernel-lzo"),
        }
    }
}

/// The peers `cannery bench` and the criterion benches compare with
/// cannery's modes, in report order; `zstd-1-dict` follows them where a
/// dictionary could be trained.
pub const BENCH_PEERS: [PeerKind; 9] = [
    PeerKind::Libdeflate(1),
    PeerKind::Libdeflate(6),
    PeerKind::Miniz(1),
    PeerKind::Miniz(6),
    PeerKind::Zlib(6),
    PeerKind::Zstd(1),
    PeerKind::Zstd(3),
    PeerKind::Lz4,
    PeerKind::Lz4Flex,
];

/// Why a peer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// A dictionary peer was created without a dictionary.
    #[error("{0} needs a dictionary")]
    NeedsDictionary(String),
    /// The library reported an error.
    #[error("{peer}: {message}")]
    Library {
        /// The peer.
        peer: String,
        /// What it said.
        message: String,
    },
}

enum Engine {
    Zstd {
        c: zstd::bulk::Compressor<'static>,
        d: zstd::bulk::Decompressor<'static>,
    },
    Lz4Flex,
    Lz4,
    Lz4Dict(lz4_dict::Lz4Dict),
    /// zlib, miniz_oxide or libdeflate: the reference engines themselves.
    Deflate(Reference),
    KernelDeflate(kernel::KernelDeflate),
    #[cfg(feature = "lzo")]
    KernelLzo,
}

/// One peer compressor with its reusable state.
pub struct Peer {
    kind: PeerKind,
    engine: Engine,
    caps: Capabilities,
    /// zstd's, lz4's and lzo's output, before it is copied out (zeroed
    /// once, here, not on every page).
    room: Box<[u8; ROOM]>,
}

/// Room for any peer's worst case on a page (lzo's, 4,419 bytes, is the
/// largest; the libraries check the room they are given).
const ROOM: usize = 2 * PAGE_SIZE;

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Peer({})", self.kind)
    }
}

fn lib_err(kind: &PeerKind, e: impl fmt::Display) -> PeerError {
    PeerError::Library {
        peer: kind.to_string(),
        message: e.to_string(),
    }
}

fn inflate_err(kind: &PeerKind, e: InflateFailure) -> PeerError {
    lib_err(
        kind,
        match e {
            InflateFailure::OutputFull => "output would exceed the page".into(),
            InflateFailure::Truncated => "stream is truncated".into(),
            InflateFailure::Rejected(m) => m,
        },
    )
}

impl PeerKind {
    /// True for the peers that need a dictionary (`zstd-N-dict`, `lz4-dict`).
    pub fn needs_dictionary(&self) -> bool {
        matches!(self, PeerKind::ZstdDict(_) | PeerKind::Lz4Dict)
    }

    /// The family's name, without the level (`zstd`, `lz4-dict`,
    /// `libdeflate`, ...): the peer's engine name.
    pub fn family(&self) -> &'static str {
        match self {
            PeerKind::Zstd(_) => "zstd",
            PeerKind::ZstdDict(_) => "zstd-dict",
            PeerKind::Lz4Flex => "lz4-flex",
            PeerKind::Lz4 => "lz4",
            PeerKind::Lz4Dict => "lz4-dict",
            PeerKind::Libdeflate(_) => "libdeflate",
            PeerKind::Zlib(_) => "zlib",
            PeerKind::Miniz(_) => "miniz_oxide",
            PeerKind::KernelDeflate => "kernel-deflate",
            PeerKind::KernelLzo => "kernel-lzo",
        }
    }
}

impl std::str::FromStr for PeerKind {
    type Err = String;

    /// The report name back to the peer: `zstd-1`, `zstd-1-dict`,
    /// `lz4-flex`, `lz4`, `lz4-dict`, `libdeflate-6`, `zlib-6`, `miniz-1`.
    fn from_str(s: &str) -> Result<PeerKind, String> {
        let bad = || format!("unknown peer compressor {s:?}");
        let level = |l: &str| l.parse::<i64>().map_err(|_| bad());
        if let Some(l) = s
            .strip_prefix("zstd-")
            .and_then(|r| r.strip_suffix("-dict"))
        {
            return Ok(PeerKind::ZstdDict(level(l)? as i32));
        }
        let kind = match s.split_once('-') {
            None if s == "lz4" => PeerKind::Lz4,
            Some(("lz4", "flex")) => PeerKind::Lz4Flex,
            Some(("lz4", "dict")) => PeerKind::Lz4Dict,
            Some(("zstd", l)) => PeerKind::Zstd(level(l)? as i32),
            Some(("libdeflate", l)) => PeerKind::Libdeflate(level(l)? as i32),
            Some(("zlib", l)) => PeerKind::Zlib(u32::try_from(level(l)?).map_err(|_| bad())?),
            Some(("miniz", l)) => PeerKind::Miniz(u8::try_from(level(l)?).map_err(|_| bad())?),
            Some(("kernel", "deflate")) => PeerKind::KernelDeflate,
            Some(("kernel", "lzo")) => PeerKind::KernelLzo,
            _ => return Err(bad()),
        };
        // One text form per peer: "zstd-01" is not "zstd-1".
        if kind.to_string() != s {
            return Err(bad());
        }
        Ok(kind)
    }
}

impl Peer {
    /// A peer; `dictionary` is used by the peers that take one
    /// ([`PeerKind::needs_dictionary`]).
    pub fn new(kind: PeerKind, dictionary: Option<&[u8]>) -> Result<Peer, PeerError> {
        let engine = match &kind {
            PeerKind::Zstd(l) => Engine::Zstd {
                c: zstd::bulk::Compressor::new(*l).map_err(|e| lib_err(&kind, e))?,
                d: zstd::bulk::Decompressor::new().map_err(|e| lib_err(&kind, e))?,
            },
            PeerKind::ZstdDict(l) => {
                let dict =
                    dictionary.ok_or_else(|| PeerError::NeedsDictionary(kind.to_string()))?;
                Engine::Zstd {
                    c: zstd::bulk::Compressor::with_dictionary(*l, dict)
                        .map_err(|e| lib_err(&kind, e))?,
                    d: zstd::bulk::Decompressor::with_dictionary(dict)
                        .map_err(|e| lib_err(&kind, e))?,
                }
            }
            PeerKind::Lz4Flex => Engine::Lz4Flex,
            PeerKind::Lz4 => Engine::Lz4,
            PeerKind::Lz4Dict => {
                let dict =
                    dictionary.ok_or_else(|| PeerError::NeedsDictionary(kind.to_string()))?;
                Engine::Lz4Dict(lz4_dict::Lz4Dict::new(dict, 1).map_err(|e| lib_err(&kind, e))?)
            }
            PeerKind::Libdeflate(l) => {
                Engine::Deflate(Reference::libdeflate(*l).map_err(|e| lib_err(&kind, e))?)
            }
            PeerKind::Zlib(l) => Engine::Deflate(Reference::zlib(*l)),
            PeerKind::Miniz(l) => Engine::Deflate(Reference::miniz(*l)),
            PeerKind::KernelDeflate => {
                Engine::KernelDeflate(kernel::KernelDeflate::new().map_err(|e| lib_err(&kind, e))?)
            }
            #[cfg(feature = "lzo")]
            PeerKind::KernelLzo => Engine::KernelLzo,
            #[cfg(not(feature = "lzo"))]
            PeerKind::KernelLzo => return Err(lib_err(
                &kind,
                "this build has no LZO model (build with `--features lzo`; rust-lzo is GPL-2.0)",
            )),
        };
        let caps = Capabilities {
            name: kind.family(),
            compress: vec![Mode::Dynamic],
            decompress: vec![Mode::Dynamic],
            path: ExecPath::Software,
            path_note: None,
            canned_compress_rules: &[],
            canned_decompress_rules: &[],
        };
        Ok(Peer {
            kind,
            engine,
            caps,
            room: Box::new([0; ROOM]),
        })
    }

    /// The peer bound to its one mode, for the batch path and the models.
    pub fn bound(self) -> crate::batch::Bound<Peer> {
        crate::batch::Bound::new(self, Mode::Dynamic, None)
    }

    /// Which peer this is.
    pub fn kind(&self) -> &PeerKind {
        &self.kind
    }

    /// Compresses one page into `out` (cleared first); `None` if the output
    /// would be 4096 bytes or more (incompressible, stored raw by zswap).
    pub fn compress(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<Option<usize>, PeerError> {
        out.clear();
        let kind = &self.kind;
        let room = &mut self.room[..];
        // The bytes written into `room`, or `None` when written into `out`.
        let in_room = match &mut self.engine {
            Engine::Zstd { c, .. } => Some(
                c.compress_to_buffer(page, room)
                    .map_err(|e| lib_err(kind, e))?,
            ),
            Engine::Lz4Flex => {
                Some(lz4_flex::block::compress_into(page, room).map_err(|e| lib_err(kind, e))?)
            }
            Engine::Lz4 => Some(
                lz4::block::compress_to_buffer(page, None, false, room)
                    .map_err(|e| lib_err(kind, e))?,
            ),
            Engine::Lz4Dict(c) => Some(c.compress(page, room).map_err(|e| lib_err(kind, e))?),
            Engine::Deflate(r) => {
                r.compress(Mode::Dynamic, None, page, out)
                    .map_err(|e| lib_err(kind, e))?;
                None
            }
            Engine::KernelDeflate(k) => {
                k.deflate(page, out).map_err(|e| lib_err(kind, e))?;
                None
            }
            #[cfg(feature = "lzo")]
            Engine::KernelLzo => {
                Some(kernel::kernel_lzo(page, room).map_err(|e| lib_err(kind, e))?)
            }
        };
        if let Some(n) = in_room {
            out.extend_from_slice(&room[..n]);
        }
        Ok(if out.len() >= PAGE_SIZE {
            None
        } else {
            Some(out.len())
        })
    }

    /// Decompresses one page compressed by [`Peer::compress`] into `out`
    /// (whose length is the page size); returns the bytes produced.
    pub fn decompress(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, PeerError> {
        let kind = &self.kind;
        match &mut self.engine {
            Engine::Zstd { d, .. } => d
                .decompress_to_buffer(data, out)
                .map_err(|e| lib_err(kind, e)),
            Engine::Lz4Flex => {
                lz4_flex::block::decompress_into(data, out).map_err(|e| lib_err(kind, e))
            }
            Engine::Lz4 => {
                let limit = i32::try_from(out.len()).map_err(|e| lib_err(kind, e))?;
                lz4::block::decompress_to_buffer(data, Some(limit), out)
                    .map_err(|e| lib_err(kind, e))
            }
            Engine::Lz4Dict(d) => d.decompress(data, out).map_err(|e| lib_err(kind, e)),
            Engine::Deflate(r) => r
                .decompress(Mode::Dynamic, None, data, out)
                .map_err(|e| lib_err(kind, e)),
            Engine::KernelDeflate(_) => {
                deflate::zlib_inflate(data, out).map_err(|e| inflate_err(kind, e))
            }
            #[cfg(feature = "lzo")]
            Engine::KernelLzo => {
                kernel::kernel_lzo_decompress(data, out).map_err(|e| lib_err(kind, e))
            }
        }
    }
}

/// A peer is an engine whose one mode is dynamic (codes of its choosing)
/// and whose streams are in its own format (zstd frames, lz4 blocks, raw
/// deflate): only the same peer reads them back. Its name is the family
/// (`zstd`, `lz4-dict`, `libdeflate`, ...); [`Peer::kind`] has the level.
impl crate::engine::Engine for Peer {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        Ok(
            match Peer::compress(self, job.data, out).map_err(peer_rejected)? {
                Some(n) => Outcome::Compressed(n),
                None => Outcome::Incompressible,
            },
        )
    }

    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
        Peer::decompress(self, job.data, out).map_err(peer_rejected)
    }
}

/// A peer's error as an engine's.
fn peer_rejected(e: PeerError) -> EngineError {
    EngineError::Rejected {
        backend: "peer",
        message: e.to_string(),
    }
}

/// Trains a zstd dictionary of at most `max_size` bytes on `pages`
/// (zstd's own trainer). `None` when zstd finds too little to learn from,
/// so callers can report it rather than fail.
pub fn train_zstd_dictionary(pages: &[&[u8]], max_size: usize) -> Option<Vec<u8>> {
    zstd::dict::from_samples(pages, max_size).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_page(seed: u8) -> Vec<u8> {
        (0..PAGE_SIZE)
            .map(|i| {
                if i % 64 < 40 {
                    (i / 64) as u8 ^ seed
                } else {
                    (i * 7) as u8
                }
            })
            .collect()
    }

    #[test]
    fn every_peer_round_trips_a_page() {
        let pages: Vec<Vec<u8>> = (0..64).map(sample_page).collect();
        let refs: Vec<&[u8]> = pages.iter().map(|p| &p[..]).collect();
        let dict = train_zstd_dictionary(&refs, 4096);
        let kinds = [
            PeerKind::Zstd(1),
            PeerKind::Zstd(3),
            PeerKind::Lz4Flex,
            PeerKind::Lz4,
            PeerKind::Libdeflate(1),
            PeerKind::Libdeflate(6),
            PeerKind::Zlib(6),
            PeerKind::Miniz(1),
        ];
        for kind in kinds
            .into_iter()
            .chain(dict.as_ref().map(|_| PeerKind::ZstdDict(1)))
            .chain(dict.as_ref().map(|_| PeerKind::Lz4Dict))
        {
            let mut p = Peer::new(kind.clone(), dict.as_deref()).unwrap();
            let mut out = Vec::new();
            let n = p
                .compress(&pages[3], &mut out)
                .unwrap()
                .expect("compressible");
            assert!(n < PAGE_SIZE / 2, "{kind}: {n}");
            let mut back = vec![0u8; PAGE_SIZE];
            assert_eq!(p.decompress(&out, &mut back).unwrap(), PAGE_SIZE, "{kind}");
            assert_eq!(back, pages[3], "{kind}");
        }
    }

    #[test]
    fn peers_run_through_the_batch_path() {
        use crate::batch::{BatchCompressor, BatchDecompressor, UnitStatus};
        let pages: Vec<Vec<u8>> = (0..3).map(sample_page).collect();
        let peers = || {
            (0..2)
                .map(|_| {
                    let lz4 = Peer::new(PeerKind::Lz4, None).unwrap();
                    crate::batch::Bound::new(lz4, Mode::Dynamic, None)
                })
                .collect::<Vec<_>>()
        };
        let mut bc = BatchCompressor::new(4, peers()).unwrap();
        let mut bd = BatchDecompressor::new(4, peers()).unwrap();
        let batch = bc.compress(pages.iter().map(|p| &p[..])).unwrap();
        let streams: Vec<Vec<u8>> = (0..3)
            .map(|i| {
                assert!(matches!(batch.status(i), UnitStatus::Compressed(_)));
                batch.data(i).unwrap().to_vec()
            })
            .collect();
        let mut out = vec![0u8; 4 * PAGE_SIZE];
        let back = bd
            .decompress(streams.iter().map(|s| &s[..]), &mut out)
            .unwrap();
        for (i, page) in pages.iter().enumerate() {
            assert_eq!(back.status(i).ok(), Some(PAGE_SIZE));
            assert_eq!(&out[i * PAGE_SIZE..(i + 1) * PAGE_SIZE], &page[..]);
        }
    }

    #[test]
    fn peer_names_parse_back() {
        for k in [
            PeerKind::Zstd(1),
            PeerKind::Zstd(-5),
            PeerKind::ZstdDict(3),
            PeerKind::Lz4Flex,
            PeerKind::Lz4,
            PeerKind::Lz4Dict,
            PeerKind::Libdeflate(12),
            PeerKind::Zlib(9),
            PeerKind::Miniz(10),
        ] {
            assert_eq!(k.to_string().parse::<PeerKind>(), Ok(k.clone()), "{k}");
        }
        for bad in [
            "", "lz4-", "zstd", "zstd-x", "zstd-01", "zlib--1", "gzip-6", "lz4-fast",
        ] {
            assert!(bad.parse::<PeerKind>().is_err(), "{bad}");
        }
    }

    #[test]
    fn random_pages_are_incompressible_for_every_peer() {
        let mut x = cannery_codec::rng::XorShift64::new(0x2545_f491_4f6c_dd1d);
        let page: Vec<u8> = (0..PAGE_SIZE).map(|_| x.next_u64() as u8).collect();
        for kind in [PeerKind::Zstd(1), PeerKind::Lz4, PeerKind::Libdeflate(6)] {
            let mut p = Peer::new(kind, None).unwrap();
            assert_eq!(p.compress(&page, &mut Vec::new()).unwrap(), None);
        }
    }
}
