//! Backends: the deflate engines `cannery validate` and `cannery fuzz`
//! check, each an [`Engine`], opened by name at one dispatch point, [`open`].
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
//! [`Outcome::Incompressible`](cannery_codec::Outcome::Incompressible) (zswap stores such pages raw). Decompression
//! writes into the caller's buffer, whose length is the output limit.
//!
//! This module does not pick a "best" backend, retry, or run anything in
//! parallel; many pages at once go through [`crate::batch`] (with
//! [`crate::batch::Bound`]). The checks `cannery validate` runs over these backends
//! are in [`check`]; what this build and machine offer is [`survey`](mod@survey);
//! [`tampered`] is the deliberately faulty engine the tests use.

/// `mod ffi`: the bindings the build script wrote to `$file` with bindgen,
/// with the lints that generated code breaks switched off.
#[cfg(any(feature = "qpl", feature = "qat"))]
macro_rules! bindgen_module {
    ($file:literal) => {
        #[allow(
            non_camel_case_types,
            non_snake_case,
            non_upper_case_globals,
            dead_code,
            unsafe_op_in_unsafe_fn,
            clippy::all,
            missing_docs
        )]
        mod ffi {
            include!(concat!(env!("OUT_DIR"), "/", $file));
        }
    };
}

pub mod check;
#[cfg(feature = "qat")]
#[allow(unsafe_code)]
pub mod qat;
#[cfg(feature = "qpl")]
#[allow(unsafe_code)]
pub mod qpl;
#[cfg(feature = "reference")]
pub mod reference;
pub mod software;
pub mod stress;
pub mod survey;
pub mod tampered;

pub use survey::{survey, Availability};

#[cfg(any(feature = "reference", feature = "qat"))]
pub(crate) use crate::engine::outcome_of;
pub(crate) use crate::engine::ALL_MODES;
pub use crate::engine::{Capabilities, Direction, Engine, EngineError, ExecPath, Job};

use cannery_codec::bitio::BitWriter;
use cannery_codec::mode::Mode;
use cannery_codec::table::Table;

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
pub fn open(name: &str) -> Result<Box<dyn Engine>, EngineError> {
    match name {
        "software" => Ok(Box::new(software::Software::new())),
        "miniz_oxide" | "miniz" | "zlib" | "libdeflate" => open_reference(name),
        "qpl" => open_qpl(),
        "qat" => open_qat(),
        _ => Err(EngineError::Unknown {
            name: name.into(),
            known: NAMES.join(", "),
        }),
    }
}

#[cfg(feature = "reference")]
fn open_reference(name: &str) -> Result<Box<dyn Engine>, EngineError> {
    Ok(match name {
        "zlib" => Box::new(reference::Reference::zlib(6)),
        "libdeflate" => Box::new(reference::Reference::libdeflate(6)?),
        _ => Box::new(reference::Reference::miniz(6)),
    })
}

#[cfg(not(feature = "reference"))]
fn open_reference(name: &str) -> Result<Box<dyn Engine>, EngineError> {
    Err(EngineError::Unavailable {
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
) -> EngineError {
    use crate::peer::deflate::InflateFailure;
    match e {
        InflateFailure::OutputFull => EngineError::OutputLimit { backend, limit },
        InflateFailure::Truncated => EngineError::Rejected {
            backend,
            message: "stream is truncated: input ends before the end of the final block".into(),
        },
        InflateFailure::Rejected(message) => EngineError::Rejected { backend, message },
    }
}

fn open_qpl() -> Result<Box<dyn Engine>, EngineError> {
    #[cfg(feature = "qpl")]
    return Ok(Box::new(qpl::Qpl::open()?));
    #[cfg(not(feature = "qpl"))]
    Err(not_built("qpl", "Intel QPL", "QPL_DIR"))
}

fn open_qat() -> Result<Box<dyn Engine>, EngineError> {
    #[cfg(feature = "qat")]
    return Ok(Box::new(qat::Qat::open()?));
    #[cfg(not(feature = "qat"))]
    Err(not_built("qat", "QATzip and qatlib", "QATZIP_DIR"))
}

/// A library backend this build left out: its feature, and what it needs.
#[cfg_attr(all(feature = "qpl", feature = "qat"), allow(dead_code))]
fn not_built(backend: &'static str, library: &str, dir_variable: &str) -> EngineError {
    EngineError::Unavailable {
        backend,
        reason: format!(
            "not built with the `{backend}` feature (rebuild with --features {backend}; needs \
             {library} installed, found through pkg-config or {dir_variable})"
        ),
    }
}

/// Opens the named backends, or every available one if `names` is `None`;
/// a named backend that cannot be opened is an error.
pub fn open_many(names: Option<&[String]>) -> Result<Vec<Box<dyn Engine>>, EngineError> {
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
pub fn canned_to_deflate(table: &Table, canned: &[u8]) -> Result<Vec<u8>, EngineError> {
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
) -> Result<Vec<u8>, EngineError> {
    let bits = bits.min(canned.len() * 8);
    let mut out = Vec::with_capacity(table.header().bytes.len() + canned.len() + 1);
    let mut w = BitWriter::new(&mut out);
    if table.is_fixed_code() {
        w.put(0b011, 3);
    } else if table.is_standard() {
        let h = table.header();
        w.put_bytes_bits(&h.bytes, h.bits);
    } else {
        return Err(EngineError::TableNotStandard {
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
) -> Result<std::borrow::Cow<'a, [u8]>, EngineError> {
    match mode {
        Mode::Canned => {
            let t = table.ok_or(EngineError::TableRequired)?;
            Ok(std::borrow::Cow::Owned(canned_to_deflate(t, data)?))
        }
        Mode::Fixed | Mode::Dynamic => Ok(std::borrow::Cow::Borrowed(data)),
    }
}

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
            Err(EngineError::TableNotStandard { .. })
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
        assert!(matches!(e, EngineError::Unknown { .. }));
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
