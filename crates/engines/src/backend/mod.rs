//! Backends: the engines that compress and decompress pages, behind one
//! [`Backend`] trait and one dispatch point, [`open`].
//!
//! | backend      | compresses               | decompresses                         | path |
//! |--------------|--------------------------|--------------------------------------|------|
//! | `software`   | fixed, dynamic, canned   | fixed, dynamic, canned               | software (ours) |
//! | `miniz_oxide`| fixed, dynamic           | fixed, dynamic, canned (with header) | software |
//! | `zlib`       | dynamic                  | fixed, dynamic, canned (with header) | software (flate2 on zlib) |
//! | `libdeflate` | dynamic                  | fixed, dynamic, canned (with header) | software |
//! | `qpl`        | fixed, dynamic, canned   | fixed, dynamic, canned               | IAA hardware, else QPL software (feature `qpl`) |
//! | `qat`        | dynamic                  | fixed, dynamic, canned (with header) | QAT hardware, else QATzip's zlib fallback (feature `qat`) |
//!
//! Stream conventions shared by every backend: a fixed or dynamic stream is
//! one complete raw deflate stream (the encoder picks its blocks; "dynamic"
//! means "codes of the encoder's choosing"); a canned stream is in IAA wire
//! format (body, end-of-block, zero padding; QPL's software path adds an
//! empty final fixed block before the padding). Engines that only speak
//! standard deflate read a canned stream through [`canned_to_deflate`], which
//! puts the table's implied header in front of it, bit-exactly.
//!
//! Pages are at most 4096 bytes; a compressed output of 4096 bytes or more is
//! [`Outcome::Incompressible`] (zswap stores such pages raw). Decompression
//! writes into the caller's buffer, whose length is the output limit.
//!
//! This module does not pick a "best" backend, retry, or run anything in
//! parallel; many pages at once go through [`crate::batch`] (with
//! [`ModeBound`]). The checks `cannery validate` runs over these backends
//! are in [`check`]; what this build and machine offer is [`survey`].

pub mod check;
#[cfg(feature = "reference")]
pub mod libdeflate;
#[cfg(feature = "reference")]
pub mod miniz;
#[cfg(feature = "qat")]
#[allow(unsafe_code)]
pub mod qat;
#[cfg(feature = "qpl")]
#[allow(unsafe_code)]
pub mod qpl;
pub mod software;
pub mod stress;
pub mod survey;
#[cfg(feature = "reference")]
pub mod zlib;

use serde::Serialize;

pub use survey::{render_survey, survey, Availability};

use cannery_codec::bitio::BitWriter;
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::decode::DecodeError;
use cannery_codec::encode::{EncodeError, Outcome};
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::{Alphabet, Table};

/// Symbol counts of pages as another library's parse sees them (QPL's
/// `qpl_gather_deflate_statistics`, ISA-L's `isal_update_histogram`): what
/// the trainer gathers for a library target. One end-of-block per page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryCounts {
    /// Literal/length symbols 0..=285.
    pub litlen: [u64; cannery_codec::constants::NUM_LITLEN],
    /// Distance symbols 0..=29.
    pub dist: [u64; cannery_codec::constants::NUM_DIST],
}

impl LibraryCounts {
    /// No symbols.
    pub fn zero() -> LibraryCounts {
        LibraryCounts {
            litlen: [0; cannery_codec::constants::NUM_LITLEN],
            dist: [0; cannery_codec::constants::NUM_DIST],
        }
    }

    /// The symbols of one page's tokens, with its end-of-block.
    pub fn of_tokens(tokens: &[cannery_codec::Token]) -> LibraryCounts {
        let mut c = LibraryCounts::zero();
        for t in tokens {
            match *t {
                cannery_codec::Token::Literal(b) => c.litlen[b as usize] += 1,
                cannery_codec::Token::Match { length, distance } => {
                    c.litlen[cannery_codec::token::length_symbol(length) as usize] += 1;
                    c.dist[cannery_codec::token::dist_symbol(distance) as usize] += 1;
                }
            }
        }
        c.litlen[cannery_codec::constants::END_OF_BLOCK as usize] += 1;
        c
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &LibraryCounts) {
        for (a, b) in self.litlen.iter_mut().zip(&other.litlen) {
            *a += b;
        }
        for (a, b) in self.dist.iter_mut().zip(&other.dist) {
            *a += b;
        }
    }
}

/// Which engine ran a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecPath {
    /// A CPU implementation.
    Software,
    /// An accelerator (IAA through QPL, or QAT).
    Hardware,
}

impl ExecPath {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ExecPath::Software => "software",
            ExecPath::Hardware => "hardware",
        }
    }
}

/// What a backend can do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Modes it can compress in (its own streams).
    #[serde(serialize_with = "mode_names")]
    pub compress: Vec<Mode>,
    /// Modes whose streams it can decompress.
    #[serde(serialize_with = "mode_names")]
    pub decompress: Vec<Mode>,
    /// Which engine runs its jobs.
    pub path: ExecPath,
    /// Why it runs on that path (e.g. why hardware is not used), if worth saying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_note: Option<String>,
    /// The table rules its canned compression needs ([`cannery_codec::table::rules`]).
    pub canned_compress_rules: &'static [Rule],
    /// The table rules its canned decompression needs.
    pub canned_decompress_rules: &'static [Rule],
}

fn mode_names<S: serde::Serializer>(modes: &[Mode], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(modes.iter().map(|m| m.name()))
}

impl Capabilities {
    /// True if it compresses in `mode`.
    pub fn can_compress(&self, mode: Mode) -> bool {
        self.compress.contains(&mode)
    }

    /// True if it decompresses `mode` streams.
    pub fn can_decompress(&self, mode: Mode) -> bool {
        self.decompress.contains(&mode)
    }

    /// `Ok` if it can compress canned pages with `table`, else which rule
    /// the table breaks and why (`"rule: reason"`).
    pub fn canned_compress_check(&self, table: &Table) -> Result<(), String> {
        first_broken(self.canned_compress_rules, table)
    }

    /// `Ok` if it can decompress canned streams of `table`, else which rule
    /// the table breaks and why.
    pub fn canned_decompress_check(&self, table: &Table) -> Result<(), String> {
        first_broken(self.canned_decompress_rules, table)
    }

    /// `Ok` if it compresses in `mode`, else the `Unsupported` error naming
    /// `backend`: the one compression-mode check every backend makes.
    pub fn check_compress(&self, backend: &'static str, mode: Mode) -> Result<(), BackendError> {
        if self.can_compress(mode) {
            Ok(())
        } else {
            Err(BackendError::Unsupported {
                backend,
                direction: Direction::Compress,
                mode,
            })
        }
    }
}

fn first_broken(rules: &[Rule], table: &Table) -> Result<(), String> {
    rules
        .iter()
        .find_map(|r| r.check(table).err().map(|e| format!("{r}: {e}")))
        .map_or(Ok(()), Err)
}

/// Compression or decompression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Compression.
    Compress,
    /// Decompression.
    Decompress,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Compress => "compress",
            Direction::Decompress => "decompress",
        })
    }
}

/// Why a backend job failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend cannot do this at all.
    #[error("{backend} cannot {direction} in {mode} mode")]
    Unsupported {
        /// Backend name.
        backend: &'static str,
        /// The direction asked for.
        direction: Direction,
        /// The mode asked for.
        mode: Mode,
    },
    /// Canned mode without a table.
    #[error("canned mode needs a table")]
    TableRequired,
    /// The table's implied header is not standard deflate, so engines that
    /// read standard deflate cannot be given a canned stream of it.
    #[error(
        "table {table_id} has incomplete codes, so header + canned body is not standard deflate"
    )]
    TableNotStandard {
        /// The table's id.
        table_id: String,
    },
    /// The page is larger than 4096 bytes.
    #[error("input is {len} bytes; a page is at most 4096")]
    InputTooLarge {
        /// Its length.
        len: usize,
    },
    /// Our encoder refused.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// Our decoder refused.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A reference library (zlib, libdeflate, miniz_oxide) refused a stream.
    #[error("{backend} rejected the stream: {message}")]
    Rejected {
        /// Backend name.
        backend: &'static str,
        /// The library's own words.
        message: String,
    },
    /// Decompressed output would exceed the caller's buffer.
    #[error("{backend}: output would exceed the limit of {limit} bytes")]
    OutputLimit {
        /// Backend name.
        backend: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A QPL call returned an error status.
    #[error("qpl {call} failed with status {code} ({name}: {text})")]
    Qpl {
        /// The C function.
        call: &'static str,
        /// The numeric status.
        code: u32,
        /// The status's C name.
        name: &'static str,
        /// What QPL says it means.
        text: &'static str,
    },
    /// QPL built a table with other code lengths than ours.
    #[error(
        "qpl changed the table: {alphabet} symbol {symbol} has length {qpl} in qpl's table, \
         {ours} in ours{hint}"
    )]
    QplTableChanged {
        /// Alphabet of the first difference.
        alphabet: Alphabet,
        /// Symbol of the first difference.
        symbol: usize,
        /// Our length.
        ours: u8,
        /// QPL's length.
        qpl: u8,
        /// A likely reason, e.g. the 56-bit rule.
        hint: String,
    },
    /// A QATzip call returned an error.
    #[error("qatzip {call} failed with {code} ({name})")]
    Qat {
        /// The C function.
        call: &'static str,
        /// The return code.
        code: i32,
        /// Its C name.
        name: &'static str,
    },
    /// No backend has this name.
    #[error("no backend named {name:?} (known: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names this build knows.
        known: String,
    },
    /// The backend could not be opened.
    #[error("{backend} is not available: {reason}")]
    Unavailable {
        /// Backend name.
        backend: &'static str,
        /// Why.
        reason: String,
    },
}

/// An engine that compresses and/or decompresses 4 KiB pages.
///
/// `table` is used in canned mode (and ignored otherwise); backends cache
/// whatever they derive from it, so passing the same table page after page
/// is cheap.
pub trait Backend {
    /// Lower-case name, as on the command line.
    fn name(&self) -> &'static str;

    /// What it can do, and on which path.
    fn capabilities(&self) -> &Capabilities;

    /// Compresses one page into `out` (cleared first). On
    /// [`Outcome::Incompressible`] the contents of `out` are unspecified.
    fn compress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, BackendError>;

    /// Decompresses one stream into `out`, whose length is the limit;
    /// returns the bytes produced.
    fn decompress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, BackendError>;

    /// The path the last job ran on (the capabilities' path unless the
    /// backend can switch per job).
    fn last_path(&self) -> ExecPath {
        self.capabilities().path
    }
}

/// A backend bound to one mode and table: the page interface of the batch
/// path ([`crate::batch`]), so any `Send` backend (software and the
/// reference libraries; not the FFI ones, whose handles stay on one thread)
/// can run as a batch lane.
#[derive(Debug)]
pub struct ModeBound<B> {
    /// The backend.
    pub backend: B,
    /// The mode of every page.
    pub mode: Mode,
    /// The table, for canned mode.
    pub table: Option<Table>,
}

impl<B: Backend + Send + 'static> crate::batch::PageCompressor for ModeBound<B> {
    type Error = BackendError;

    fn compress_page(&mut self, unit: &[u8], out: &mut Vec<u8>) -> Result<Outcome, BackendError> {
        self.backend
            .compress(self.mode, self.table.as_ref(), unit, out)
    }
}

impl<B: Backend + Send + 'static> crate::batch::PageDecompressor for ModeBound<B> {
    type Error = BackendError;

    fn decompress_page(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, BackendError> {
        self.backend
            .decompress(self.mode, self.table.as_ref(), data, out)
    }
}

/// Every backend name this build knows, in display order.
pub const NAMES: [&str; 6] = [
    "software",
    "miniz_oxide",
    "zlib",
    "libdeflate",
    "qpl",
    "qat",
];

/// The one dispatch point: opens a backend by name.
pub fn open(name: &str) -> Result<Box<dyn Backend>, BackendError> {
    match name {
        "software" => Ok(Box::new(software::Software::new())),
        "miniz_oxide" | "miniz" | "zlib" | "libdeflate" => open_reference(name),
        "qpl" => open_qpl(),
        "qat" => open_qat(),
        _ => Err(BackendError::Unknown {
            name: name.into(),
            known: NAMES.join(", "),
        }),
    }
}

#[cfg(feature = "reference")]
fn open_reference(name: &str) -> Result<Box<dyn Backend>, BackendError> {
    Ok(match name {
        "zlib" => Box::new(zlib::Zlib::new()),
        "libdeflate" => Box::new(libdeflate::Libdeflate::new()),
        _ => Box::new(miniz::Miniz::new()),
    })
}

#[cfg(not(feature = "reference"))]
fn open_reference(name: &str) -> Result<Box<dyn Backend>, BackendError> {
    Err(BackendError::Unavailable {
        backend: match name {
            "zlib" => "zlib",
            "libdeflate" => "libdeflate",
            _ => "miniz_oxide",
        },
        reason: "not built with the `reference` feature (the codec's default; rebuild \
                 cannery-codec with its default features)"
            .into(),
    })
}

/// A reference library's inflate failure as a backend error.
#[cfg(feature = "reference")]
fn inflate_error(
    backend: &'static str,
    limit: usize,
    e: crate::peer::deflate::InflateFailure,
) -> BackendError {
    use crate::peer::deflate::InflateFailure;
    match e {
        InflateFailure::OutputFull => BackendError::OutputLimit { backend, limit },
        InflateFailure::Truncated => BackendError::Rejected {
            backend,
            message: "stream is truncated: input ends before the end of the final block".into(),
        },
        InflateFailure::Rejected(message) => BackendError::Rejected { backend, message },
    }
}

#[cfg(feature = "qpl")]
fn open_qpl() -> Result<Box<dyn Backend>, BackendError> {
    Ok(Box::new(qpl::Qpl::open()?))
}

#[cfg(not(feature = "qpl"))]
fn open_qpl() -> Result<Box<dyn Backend>, BackendError> {
    Err(BackendError::Unavailable {
        backend: "qpl",
        reason: "not built with the `qpl` feature (rebuild with --features qpl; needs Intel QPL \
                 installed, found through pkg-config or QPL_DIR)"
            .into(),
    })
}

#[cfg(feature = "qat")]
fn open_qat() -> Result<Box<dyn Backend>, BackendError> {
    Ok(Box::new(qat::Qat::open()?))
}

#[cfg(not(feature = "qat"))]
fn open_qat() -> Result<Box<dyn Backend>, BackendError> {
    Err(BackendError::Unavailable {
        backend: "qat",
        reason: "not built with the `qat` feature (rebuild with --features qat; needs QATzip and \
                 qatlib installed, found through pkg-config or QATZIP_DIR)"
            .into(),
    })
}

/// Opens the named backends, or every available one if `names` is `None`;
/// a named backend that cannot be opened is an error.
pub fn open_many(names: Option<&[String]>) -> Result<Vec<Box<dyn Backend>>, BackendError> {
    match names {
        Some(list) => list.iter().map(|n| open(n)).collect(),
        None => Ok(NAMES.iter().filter_map(|n| open(n).ok()).collect()),
    }
}

/// Turns a canned (IAA wire format) stream into standard raw deflate by
/// putting the table's implied header in front of it, at bit granularity:
/// header bits, then every bit of the canned stream.
///
/// The canned stream's own padding (and QPL's empty final fixed block) ends
/// up after the final block's end-of-block code, where standard inflaters
/// stop reading; at most two bytes of such tail follow the deflate stream.
/// The fixed code gets a 3-bit fixed block header (BFINAL=1, BTYPE=01)
/// instead. Tables with incomplete codes have no standard header.
pub fn canned_to_deflate(table: &Table, canned: &[u8]) -> Result<Vec<u8>, BackendError> {
    canned_bits_to_deflate(table, canned, canned.len() * 8)
}

/// [`canned_to_deflate`] of the first `bits` bits of `canned` (at most all
/// of them), then zero padding to a byte. With `bits` the length of the
/// body ([`CannedDecoder::body_bits`](cannery_codec::decode::CannedDecoder::body_bits))
/// the deflate stream ends in its last byte: nothing follows the final
/// block, for inflaters that read on past it.
pub fn canned_bits_to_deflate(
    table: &Table,
    canned: &[u8],
    bits: usize,
) -> Result<Vec<u8>, BackendError> {
    let bits = bits.min(canned.len() * 8);
    let mut out = Vec::with_capacity(table.header().bytes.len() + canned.len() + 1);
    let mut w = BitWriter::new(&mut out);
    if table.is_fixed_code() {
        w.put(0b011, 3);
    } else if table.is_standard() {
        let h = table.header();
        w.put_bytes_bits(&h.bytes, h.bits);
    } else {
        return Err(BackendError::TableNotStandard {
            table_id: table.id(),
        });
    }
    w.put_bytes_bits(canned, bits);
    w.finish();
    Ok(out)
}

/// The raw deflate form of a stream of `mode`: canned streams get their
/// header (see [`canned_to_deflate`]), others are already raw deflate.
#[cfg_attr(not(feature = "reference"), allow(dead_code))]
pub(crate) fn as_deflate<'a>(
    mode: Mode,
    table: Option<&Table>,
    data: &'a [u8],
) -> Result<std::borrow::Cow<'a, [u8]>, BackendError> {
    match mode {
        Mode::Canned => {
            let t = table.ok_or(BackendError::TableRequired)?;
            Ok(std::borrow::Cow::Owned(canned_to_deflate(t, data)?))
        }
        Mode::Fixed | Mode::Dynamic => Ok(std::borrow::Cow::Borrowed(data)),
    }
}

/// The outcome of a reference compressor's output under zswap's rule.
#[cfg_attr(not(feature = "reference"), allow(dead_code))]
pub(crate) fn outcome_of(out: &[u8]) -> Outcome {
    if out.len() >= PAGE_SIZE {
        Outcome::Incompressible
    } else {
        Outcome::Compressed(out.len())
    }
}

/// Checks a page's size before compressing it.
pub(crate) fn check_page(page: &[u8]) -> Result<(), BackendError> {
    if page.len() > PAGE_SIZE {
        Err(BackendError::InputTooLarge { len: page.len() })
    } else {
        Ok(())
    }
}

/// Standard-deflate decompression modes: what reference inflaters read.
pub(crate) const ALL_MODES: [Mode; 3] = [Mode::Fixed, Mode::Dynamic, Mode::Canned];

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::encode::encode_canned_tokens;
    use cannery_codec::token::Token;

    fn bit(bytes: &[u8], i: usize) -> u8 {
        (bytes[i / 8] >> (i % 8)) & 1
    }

    #[test]
    fn canned_to_deflate_is_header_bits_then_every_body_bit() {
        let t = Table::kernel_2024();
        let body = encode_canned_tokens(&[Token::Literal(b'a'), Token::Literal(b'b')], &t);
        let d = canned_to_deflate(&t, &body).unwrap();
        let h = t.header();
        assert_eq!(d.len(), (h.bits + body.len() * 8).div_ceil(8));
        for i in 0..h.bits {
            assert_eq!(bit(&d, i), bit(&h.bytes, i), "header bit {i}");
        }
        for j in 0..body.len() * 8 {
            assert_eq!(bit(&d, h.bits + j), bit(&body, j), "body bit {j}");
        }
        // The fixed code gets BFINAL=1, BTYPE=01 (3 bits) instead.
        let f = Table::fixed();
        let fb = encode_canned_tokens(&[Token::Literal(0)], &f);
        let fd = canned_to_deflate(&f, &fb).unwrap();
        assert_eq!(fd[0] & 0b111, 0b011);
        let mut out = [0u8; 4];
        // 3 + 8 (literal) + 7 (EOB) = 18 bits: 3 bytes, nothing trailing.
        assert_eq!(cannery_codec::decode::inflate(&fd, &mut out), Ok(1));
        // Incomplete tables have no standard header.
        let mut l = *t.lengths();
        l.litlen[285] = 0;
        let inc = Table::from_lengths(&l.litlen, &l.dist).unwrap();
        assert!(matches!(
            canned_to_deflate(&inc, &body),
            Err(BackendError::TableNotStandard { .. })
        ));
    }

    #[test]
    #[cfg_attr(miri, ignore = "opens libdeflate, a C library Miri cannot run")]
    fn open_knows_every_name_and_refuses_others() {
        for name in ["software", "miniz_oxide", "zlib", "libdeflate"] {
            #[cfg(feature = "reference")]
            assert_eq!(open(name).unwrap().name(), name);
            #[cfg(not(feature = "reference"))]
            if name != "software" {
                let e = open(name).err().expect("reference backends are not built");
                assert!(e.to_string().contains("`reference` feature"), "{e}");
            }
        }
        let e = open("nope").err().expect("no such backend");
        assert!(matches!(e, BackendError::Unknown { .. }));
        assert!(
            e.to_string().starts_with("no backend named \"nope\""),
            "{e}"
        );
        #[cfg(not(feature = "qpl"))]
        assert!(open("qpl")
            .err()
            .expect("qpl is not built")
            .to_string()
            .contains("not built with the `qpl` feature"));
    }
}
