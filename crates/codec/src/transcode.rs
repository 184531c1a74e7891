//! Pages to records and back, one at a time: what `cannery compress` and
//! `cannery decompress` do, for any page source and any writer (a file, a
//! pipe), so nothing is held but one page and one stream. The framing is
//! [`crate::records`]; where pages come from and where bytes go (files,
//! atomic outputs, `-`) is the caller's.

use std::io::{Read, Write};

use crate::constants::PAGE_SIZE;
use crate::decode::{DecodeError, Decoder};
use crate::encode::{EncodeError, Encoder, Outcome};
use crate::records::{Record, RecordError, RecordReader, RecordWriter};

/// The largest output one record may decode to with a limit: a deflate
/// stream expands at most 1032 times (258 bytes per 2-bit match code).
const MAX_EXPANSION: usize = 1032;

/// Why pages or records could not be transcoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscodeError<E: std::error::Error + 'static> {
    /// The page source failed (unreadable file, partial last page, ...).
    #[error(transparent)]
    Source(E),
    /// Writing failed.
    #[error("writing: {0}")]
    Write(#[source] std::io::Error),
    /// A page did not encode.
    #[error("page {page}: {source}")]
    Encode {
        /// Page number, from 0.
        page: u64,
        /// The encoder's error.
        source: EncodeError,
    },
    /// The records stream is malformed.
    #[error(transparent)]
    Records(#[from] RecordError),
    /// A record did not decode.
    #[error("record {index} (byte offset {offset}): {source}")]
    Decode {
        /// Record number.
        index: u64,
        /// Its byte offset.
        offset: u64,
        /// The decoder's error.
        source: DecodeError,
    },
    /// A record of a page stream decoded to another length.
    #[error(
        "record {index} (byte offset {offset}) decodes to {len} bytes, not a 4096-byte page \
         (use --max-output for general data)"
    )]
    NotAPage {
        /// Record number.
        index: u64,
        /// Its byte offset.
        offset: u64,
        /// Bytes it decoded to.
        len: usize,
    },
}

/// What a compression wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompressSummary {
    /// Pages read.
    pub pages: u64,
    /// Bytes of the records' payloads (raw pages at 4096).
    pub stored_bytes: u64,
    /// Pages stored raw (output of 4096 bytes or more).
    pub incompressible_pages: u64,
}

/// Compresses each page of `pages` with `encoder` into one record on `out`
/// (an incompressible page is stored raw, as a 4096-byte record).
pub fn compress_pages<E: std::error::Error + 'static, W: Write>(
    encoder: &mut Encoder,
    pages: impl IntoIterator<Item = Result<Vec<u8>, E>>,
    out: W,
) -> Result<CompressSummary, TranscodeError<E>> {
    let mut writer = RecordWriter::new(out);
    let mut stream = Vec::with_capacity(PAGE_SIZE);
    let mut s = CompressSummary::default();
    for page in pages {
        let page = page.map_err(TranscodeError::Source)?;
        let outcome =
            encoder
                .compress(&page, &mut stream)
                .map_err(|source| TranscodeError::Encode {
                    page: s.pages,
                    source,
                })?;
        let data = match outcome {
            Outcome::Compressed(_) => &stream[..],
            Outcome::Incompressible => {
                s.incompressible_pages += 1;
                &page[..]
            }
        };
        writer.write(data).map_err(TranscodeError::Write)?;
        s.stored_bytes += data.len() as u64;
        s.pages += 1;
    }
    writer.finish().map_err(TranscodeError::Write)?;
    Ok(s)
}

/// Decodes every record of `input` with `decoder` onto `out`; returns the
/// records decoded. A 4096-byte record is a raw page and is copied. Without
/// `max_output` every other record must decode to one 4096-byte page; with
/// it, to at most that many bytes (general data).
pub fn decompress_records<R: Read, W: Write>(
    decoder: &Decoder,
    input: R,
    mut out: W,
    max_output: Option<usize>,
) -> Result<u64, TranscodeError<std::io::Error>> {
    let mut buf = Vec::new();
    let mut records = 0u64;
    let mut reader = RecordReader::new(input);
    let mut rec = Record::default();
    while let Some(read) = reader.next_into(&mut rec) {
        read?;
        let decoded: &[u8] = if rec.is_raw_page() {
            &rec.data
        } else {
            // Never more than the stream can expand to, whatever the limit.
            let limit = max_output
                .unwrap_or(PAGE_SIZE)
                .min(rec.data.len().saturating_mul(MAX_EXPANSION).max(PAGE_SIZE));
            buf.resize(limit, 0);
            let n = decoder.decompress(&rec.data, &mut buf).map_err(|source| {
                TranscodeError::Decode {
                    index: rec.index,
                    offset: rec.offset,
                    source,
                }
            })?;
            if max_output.is_none() && n != PAGE_SIZE {
                return Err(TranscodeError::NotAPage {
                    index: rec.index,
                    offset: rec.offset,
                    len: n,
                });
            }
            &buf[..n]
        };
        out.write_all(decoded).map_err(TranscodeError::Write)?;
        records += 1;
    }
    out.flush().map_err(TranscodeError::Write)?;
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, Level, Mode, Table};

    fn pages() -> Vec<Vec<u8>> {
        let random = crate::rng::XorShift64Star::from_state(7).bytes(PAGE_SIZE);
        vec![
            vec![1u8; PAGE_SIZE],
            random,
            (0..PAGE_SIZE).map(|i| (i / 9) as u8).collect(),
        ]
    }

    #[test]
    fn pages_round_trip_through_records_raw_pages_included() {
        let t = Table::kernel_2024();
        let mut enc = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&t)).unwrap();
        let dec = Decoder::new(Mode::Canned, Format::Iaa, Some(&t)).unwrap();
        let ps = pages();
        let mut records = Vec::new();
        let s = compress_pages(
            &mut enc,
            ps.iter().cloned().map(Ok::<_, std::io::Error>),
            &mut records,
        )
        .unwrap();
        assert_eq!((s.pages, s.incompressible_pages), (3, 1));
        for max in [None, Some(PAGE_SIZE), Some(usize::MAX)] {
            let mut back = Vec::new();
            assert_eq!(
                decompress_records(&dec, &records[..], &mut back, max).unwrap(),
                3
            );
            assert_eq!(back, ps.concat(), "{max:?}");
        }
        // A limit below a page: the raw page still copies, the others fail.
        let e = decompress_records(&dec, &records[..], Vec::new(), Some(10)).unwrap_err();
        assert!(matches!(e, TranscodeError::Decode { index: 0, .. }), "{e}");
    }

    #[test]
    fn a_failing_source_stops_the_compression() {
        let mut enc = Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap();
        let src = vec![
            Ok(vec![0u8; PAGE_SIZE]),
            Err(std::io::Error::other("partial page")),
        ];
        let e = compress_pages(&mut enc, src, Vec::new()).unwrap_err();
        assert!(e.to_string().contains("partial page"), "{e}");
    }
}
