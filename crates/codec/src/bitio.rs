//! Bit I/O per RFC 1951: bits are packed LSB-first into bytes; Huffman codes
//! are written pre-reversed (so their MSB goes first), extra bits as plain
//! LSB-first integers.
//!
//! [`BitWriter`] appends to a `Vec<u8>`; [`BitReader`] reads a slice and never
//! reads past it (missing bits read as zero and are detected by
//! [`BitReader::overrun`]). Neither knows about Huffman tables.

/// Appends bits to a byte vector, LSB-first.
#[derive(Debug)]
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    /// Writes after whatever `out` already holds.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter {
            out,
            acc: 0,
            nbits: 0,
        }
    }

    /// Appends the low `n` bits of `bits` (n ≤ 32; higher bits of `bits` must be zero).
    #[inline]
    pub fn put(&mut self, bits: u32, n: u32) {
        debug_assert!(n <= 32);
        debug_assert!(n == 32 || bits >> n == 0, "stray high bits");
        self.acc |= (bits as u64) << self.nbits;
        self.nbits += n;
        if self.nbits >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.nbits -= 32;
        }
    }

    /// Appends `nbits` bits held in `bytes` (LSB-first), e.g. a stored block header.
    pub fn put_bytes_bits(&mut self, bytes: &[u8], nbits: usize) {
        debug_assert!(nbits <= bytes.len() * 8);
        let whole = nbits / 8;
        for &b in &bytes[..whole] {
            self.put(b as u32, 8);
        }
        let rest = (nbits % 8) as u32;
        if rest > 0 {
            self.put(bytes[whole] as u32 & ((1 << rest) - 1), rest);
        }
    }

    /// Bytes written so far, counting a partial byte as a whole one.
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.out.len() + self.nbits.div_ceil(8) as usize
    }

    /// Bits written so far (including bytes that were in `out` before).
    pub fn bit_len(&self) -> usize {
        self.out.len() * 8 + self.nbits as usize
    }

    /// Pads with zero bits to a byte boundary and writes out everything.
    pub fn finish(mut self) {
        while self.nbits > 0 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.nbits = self.nbits.saturating_sub(8);
        }
    }
}

/// Reads bits LSB-first from a byte slice.
///
/// Past the end of the slice it yields zero bits and counts them, so the
/// decoder's hot loop needs no end checks; callers test [`BitReader::overrun`]
/// before trusting a result.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    /// Next byte of `data` to load into `acc`.
    pos: usize,
    acc: u64,
    nbits: u32,
    /// Zero bytes loaded past the end of `data`.
    phantom: usize,
}

impl<'a> BitReader<'a> {
    /// Starts at the first bit of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        BitReader {
            data,
            pos: 0,
            acc: 0,
            nbits: 0,
            phantom: 0,
        }
    }

    /// Makes at least 56 bits available.
    #[inline]
    pub fn refill(&mut self) {
        if self.pos + 8 <= self.data.len() {
            // Branch-free refill (libdeflate's trick): load 8 bytes, keep the
            // whole bytes that fit. Bits above `nbits` already in `acc` are
            // the same input bits, so OR-ing them again changes nothing.
            let word = u64::from_le_bytes(self.data[self.pos..self.pos + 8].try_into().unwrap());
            self.acc |= word << self.nbits;
            self.pos += ((63 - self.nbits) >> 3) as usize;
            self.nbits |= 56;
        } else {
            self.refill_slow();
        }
    }

    /// [`BitReader::refill`], then whether every bit consumed so far lay in
    /// the data. Once one did not, [`BitReader::overrun`] stays true and a
    /// decode can only end truncated, so a loop may stop there instead of
    /// decoding zero bits up to its output limit. The check runs only on the
    /// slow path: bits can run out only within the last 8 bytes.
    #[inline]
    pub fn refill_in_data(&mut self) -> bool {
        if self.pos + 8 <= self.data.len() {
            self.refill();
            true
        } else {
            self.refill_slow();
            !self.overrun()
        }
    }

    #[cold]
    fn refill_slow(&mut self) {
        while self.nbits <= 56 {
            let byte = match self.data.get(self.pos) {
                Some(&b) => b,
                None => {
                    self.phantom += 1;
                    0
                }
            };
            self.pos += 1;
            self.acc |= (byte as u64) << self.nbits;
            self.nbits += 8;
        }
    }

    /// The next `n` bits without consuming them (n ≤ 56; call `refill` first).
    #[inline]
    pub fn peek(&self, n: u32) -> u64 {
        debug_assert!(n <= self.nbits);
        self.acc & ((1u64 << n) - 1)
    }

    /// Every buffered bit, for table lookups that use only a code's worth of
    /// them (after `refill`, at least the low 56 bits are valid).
    #[inline]
    pub fn peek_all(&self) -> u64 {
        self.acc
    }

    /// Consumes `n` bits (n ≤ the bits available).
    #[inline]
    pub fn consume(&mut self, n: u32) {
        debug_assert!(n <= self.nbits);
        self.acc >>= n;
        self.nbits -= n;
    }

    /// Reads `n` bits (n ≤ 32), refilling as needed.
    #[inline]
    pub fn bits(&mut self, n: u32) -> u32 {
        self.refill();
        let v = self.peek(n) as u32;
        self.consume(n);
        v
    }

    /// The whole input.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The reader's state, for a decoding loop that keeps it in registers:
    /// the next byte to load, the bit buffer and its count of valid bits.
    /// Bits of the buffer above the valid ones are zero or the input bits
    /// that belong there; [`BitReader::resume`] takes a state that keeps it so.
    pub(crate) fn state(&self) -> (usize, u64, u32) {
        (self.pos, self.acc, self.nbits)
    }

    /// Continues from a state made from [`BitReader::state`] by the same
    /// loads, shifts and refills as this reader's own, within the data.
    pub(crate) fn resume(&mut self, pos: usize, acc: u64, nbits: u32) {
        debug_assert!(pos <= self.data.len() && nbits <= 63 && self.phantom == 0);
        self.pos = pos;
        self.acc = acc;
        self.nbits = nbits;
    }

    /// Bits consumed from the start of the data.
    pub fn bit_pos(&self) -> usize {
        self.pos * 8 - self.nbits as usize
    }

    /// True if more bits were consumed than the data holds.
    pub fn overrun(&self) -> bool {
        self.bit_pos() > self.data.len() * 8
    }

    /// Skips to the next byte boundary.
    pub fn align(&mut self) {
        let r = self.nbits % 8;
        self.consume(r);
    }

    /// Bytes of `data` after the current position, once aligned to a byte.
    pub fn remaining_bytes(&self) -> usize {
        self.data.len().saturating_sub(self.bit_pos().div_ceil(8))
    }

    /// Drops buffered bits and returns the unread bytes (byte-aligned position
    /// required), for stored blocks.
    pub fn take_bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        debug_assert_eq!(self.nbits % 8, 0);
        let start = self.bit_pos() / 8;
        let end = start.checked_add(n)?;
        let slice = self.data.get(start..end)?;
        self.pos = end;
        self.acc = 0;
        self.nbits = 0;
        Some(slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lsb_first_packing() {
        let mut v = Vec::new();
        let mut w = BitWriter::new(&mut v);
        w.put(1, 1); // BFINAL
        w.put(1, 2); // BTYPE=01
        w.put(0b10101, 5);
        w.finish();
        assert_eq!(v, vec![0b1010_1011]);
    }

    proptest! {
        #[test]
        fn writer_and_reader_agree(fields in proptest::collection::vec((0u32..=32, any::<u32>()), 0..200)) {
            let mut v = Vec::new();
            let mut w = BitWriter::new(&mut v);
            let mut total = 0usize;
            for &(n, x) in &fields {
                let x = if n == 32 { x } else { x & ((1u32 << n) - 1) };
                w.put(x, n);
                total += n as usize;
            }
            prop_assert_eq!(w.bit_len(), total);
            w.finish();
            prop_assert_eq!(v.len(), total.div_ceil(8));
            let mut r = BitReader::new(&v);
            for &(n, x) in &fields {
                let x = if n == 32 { x } else { x & ((1u32 << n) - 1) };
                let got = if n == 32 { r.bits(16) | (r.bits(16) << 16) } else { r.bits(n) };
                prop_assert_eq!(got, x);
            }
            prop_assert!(!r.overrun());
            prop_assert_eq!(r.bit_pos(), total);
        }
    }

    #[test]
    fn reading_past_the_end_is_detected() {
        let data = [0xffu8; 3];
        let mut r = BitReader::new(&data);
        assert_eq!(r.bits(24), 0xff_ffff);
        assert!(!r.overrun());
        assert_eq!(r.bits(1), 0);
        assert!(r.overrun());
    }
}
