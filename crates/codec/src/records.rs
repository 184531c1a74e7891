//! The `records` interchange form of compressed pages: for each page in
//! order, a `u32` little-endian length `L`, then `L` bytes. `L == 4096` means
//! the bytes are the raw page (it was incompressible, as zswap stores it).
//!
//! This module only frames bytes; it does not compress or decompress.

use std::io::{self, Read, Write};

use crate::constants::PAGE_SIZE;

/// Largest record length accepted when reading (guards against garbage
/// lengths allocating gigabytes).
pub const MAX_RECORD_LEN: u32 = 1 << 24;

/// Why a records stream could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// An I/O error.
    #[error("reading records: {0}")]
    Io(#[from] io::Error),
    /// The stream ends inside a record.
    #[error("record {index} at byte offset {offset} is truncated: header says {len} bytes, {available} remain")]
    Truncated {
        /// Record number, from 0.
        index: u64,
        /// Byte offset of its length field.
        offset: u64,
        /// Length it announces.
        len: u32,
        /// Bytes actually left.
        available: u64,
    },
    /// The stream ends inside a length field.
    #[error("record {index} at byte offset {offset} is truncated inside its 4-byte length")]
    TruncatedLength {
        /// Record number, from 0.
        index: u64,
        /// Byte offset of its length field.
        offset: u64,
    },
    /// A length beyond [`MAX_RECORD_LEN`].
    #[error("record {index} at byte offset {offset} claims {len} bytes (limit {MAX_RECORD_LEN}): not a records file?")]
    TooLong {
        /// Record number, from 0.
        index: u64,
        /// Byte offset of its length field.
        offset: u64,
        /// Length it announces.
        len: u32,
    },
}

/// One record as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Record number, from 0.
    pub index: u64,
    /// Byte offset of its length field in the stream.
    pub offset: u64,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Record {
    /// True if the record holds a raw (incompressible) page.
    pub fn is_raw_page(&self) -> bool {
        self.data.len() == PAGE_SIZE
    }
}

/// Writes records.
#[derive(Debug)]
pub struct RecordWriter<W: Write> {
    inner: W,
}

impl<W: Write> RecordWriter<W> {
    /// Writes records to `inner`.
    pub fn new(inner: W) -> Self {
        RecordWriter { inner }
    }

    /// Writes one record. `data` must be shorter than 2^32 bytes.
    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        let len =
            u32::try_from(data.len()).map_err(|_| io::Error::other("record longer than 4 GiB"))?;
        self.inner.write_all(&len.to_le_bytes())?;
        self.inner.write_all(data)
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// Reads records one at a time.
#[derive(Debug)]
pub struct RecordReader<R: Read> {
    inner: R,
    index: u64,
    offset: u64,
    done: bool,
}

impl<R: Read> RecordReader<R> {
    /// Reads records from `inner`.
    pub fn new(inner: R) -> Self {
        RecordReader {
            inner,
            index: 0,
            offset: 0,
            done: false,
        }
    }

    /// The next record into `rec`, reusing its buffer: what
    /// [`Iterator::next`] gives, without an allocation per record. After
    /// `None` or an error, every later call gives `None`.
    pub fn next_into(&mut self, rec: &mut Record) -> Option<Result<(), RecordError>> {
        if self.done {
            return None;
        }
        let r = self.read_into(rec).transpose();
        if !matches!(r, Some(Ok(()))) {
            self.done = true;
        }
        r
    }

    fn read_into(&mut self, rec: &mut Record) -> Result<Option<()>, RecordError> {
        let (index, offset) = (self.index, self.offset);
        let mut len = [0u8; 4];
        let got = read_full(&mut self.inner, &mut len)?;
        if got == 0 {
            return Ok(None);
        }
        if got < 4 {
            return Err(RecordError::TruncatedLength { index, offset });
        }
        let len = u32::from_le_bytes(len);
        if len > MAX_RECORD_LEN {
            return Err(RecordError::TooLong { index, offset, len });
        }
        // Read in steps that double from READ_AHEAD: a length field with
        // little behind it never makes a buffer of its length.
        let len_bytes = len as usize;
        rec.data.clear();
        while rec.data.len() < len_bytes {
            let have = rec.data.len();
            let step = (len_bytes - have).min(READ_AHEAD.max(have));
            rec.data.resize(have + step, 0);
            let got = read_full(&mut self.inner, &mut rec.data[have..])?;
            if got < step {
                return Err(RecordError::Truncated {
                    index,
                    offset,
                    len,
                    available: (have + got) as u64,
                });
            }
        }
        self.index += 1;
        self.offset += 4 + u64::from(len);
        (rec.index, rec.offset) = (index, offset);
        Ok(Some(()))
    }
}

/// The first step in which a record's bytes are read; each later step
/// reads as many as were read before it.
const READ_AHEAD: usize = 1 << 16;

impl<R: Read> Iterator for RecordReader<R> {
    type Item = Result<Record, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut rec = Record::default();
        self.next_into(&mut rec).map(|r| r.map(|()| rec))
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_offsets() {
        let mut w = RecordWriter::new(Vec::new());
        w.write(b"abc").unwrap();
        w.write(&[7u8; 4096]).unwrap();
        w.write(b"").unwrap();
        let bytes = w.finish().unwrap();
        let recs: Vec<Record> = RecordReader::new(&bytes[..])
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].data, b"abc");
        assert_eq!((recs[1].index, recs[1].offset), (1, 7));
        assert!(recs[1].is_raw_page());
        assert_eq!(recs[2].offset, 7 + 4 + 4096);
    }

    #[test]
    fn truncation_names_the_record() {
        let mut w = RecordWriter::new(Vec::new());
        w.write(b"abcdef").unwrap();
        w.write(b"xyz").unwrap();
        let bytes = w.finish().unwrap();
        let cut = &bytes[..bytes.len() - 1];
        let r: Vec<_> = RecordReader::new(cut).collect();
        assert!(matches!(
            r[1],
            Err(RecordError::Truncated {
                index: 1,
                offset: 10,
                len: 3,
                available: 2
            })
        ));
        let r: Vec<_> = RecordReader::new(&bytes[..12]).collect();
        assert!(matches!(
            r[1],
            Err(RecordError::TruncatedLength {
                index: 1,
                offset: 10
            })
        ));
        let r: Vec<_> = RecordReader::new(&[0xff, 0xff, 0xff, 0xff][..]).collect();
        assert!(matches!(r[0], Err(RecordError::TooLong { .. })));
        assert_eq!(r.len(), 1, "iteration stops after an error");
    }

    #[test]
    fn long_records_read_in_steps_and_a_bare_length_reserves_little() {
        // Longer than a step: read whole, or truncated with the right count.
        let long: Vec<u8> = (0..3 * READ_AHEAD + 5).map(|i| (i * 7) as u8).collect();
        let mut w = RecordWriter::new(Vec::new());
        w.write(&long).unwrap();
        w.write(b"tail").unwrap();
        let bytes = w.finish().unwrap();
        let recs: Vec<Record> = RecordReader::new(&bytes[..])
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(recs[0].data, long);
        assert_eq!(
            (recs[1].offset, &recs[1].data[..]),
            (4 + long.len() as u64, &b"tail"[..])
        );
        let cut = 4 + 2 * READ_AHEAD + 9;
        let r: Vec<_> = RecordReader::new(&bytes[..cut]).collect();
        assert!(
            matches!(r[0], Err(RecordError::Truncated { available, .. }) if available == cut as u64 - 4),
            "{r:?}"
        );
        // A length field claiming MAX_RECORD_LEN with 10 bytes behind it.
        let mut claim = MAX_RECORD_LEN.to_le_bytes().to_vec();
        claim.extend_from_slice(&[1; 10]);
        let mut rec = Record::default();
        let mut reader = RecordReader::new(&claim[..]);
        assert!(matches!(
            reader.next_into(&mut rec),
            Some(Err(RecordError::Truncated { available: 10, .. }))
        ));
        assert!(
            rec.data.capacity() <= 2 * READ_AHEAD,
            "{}",
            rec.data.capacity()
        );
        assert!(
            reader.next_into(&mut rec).is_none(),
            "reading stops after an error"
        );
    }

    proptest::proptest! {
        #[test]
        fn next_into_reads_what_the_iterator_reads(bytes in proptest::collection::vec(
            proptest::prop_oneof![proptest::prelude::Just(0u8), 0u8..=255, proptest::prelude::Just(3u8)],
            0..200,
        )) {
            let by_iter: Vec<String> = RecordReader::new(&bytes[..])
                .map(|r| format!("{r:?}"))
                .collect();
            let mut reader = RecordReader::new(&bytes[..]);
            let mut rec = Record::default();
            let mut by_into = Vec::new();
            while let Some(r) = reader.next_into(&mut rec) {
                by_into.push(format!("{:?}", r.map(|()| rec.clone())));
            }
            proptest::prop_assert_eq!(by_into, by_iter);
        }
    }
}
