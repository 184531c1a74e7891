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
#[derive(Clone, Debug, PartialEq, Eq)]
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

    fn read_record(&mut self) -> Result<Option<Record>, RecordError> {
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
        let mut data = vec![0u8; len as usize];
        let got = read_full(&mut self.inner, &mut data)?;
        if got < data.len() {
            return Err(RecordError::Truncated {
                index,
                offset,
                len,
                available: got as u64,
            });
        }
        self.index += 1;
        self.offset += 4 + len as u64;
        Ok(Some(Record {
            index,
            offset,
            data,
        }))
    }
}

impl<R: Read> Iterator for RecordReader<R> {
    type Item = Result<Record, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.read_record().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
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
}
