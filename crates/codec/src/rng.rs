//! The workspace's one deterministic generator family, for seeded stress
//! pages, synthetic test pages and benchmark noise: Marsaglia's xorshift64
//! (shifts 13, 7, 17) and Vigna's xorshift64* (shifts 12, 25, 27, then a
//! multiply). Fast, reproducible on every machine, and not for anything
//! that must be unpredictable. Page sampling at capture uses SplitMix64
//! (`cannery_capture::sample`), a documented part of the snapshot format.

/// xorshift64*: the state steps by shifts 12, 25, 27; each output is the
/// new state times 0x2545F4914F6CDD1D.
#[derive(Clone, Debug)]
pub struct XorShift64Star(u64);

impl XorShift64Star {
    /// From a raw state (zero is made one: zero is a fixed point).
    pub fn from_state(state: u64) -> XorShift64Star {
        XorShift64Star(state.max(1))
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The next byte (the output's top 8 bits).
    pub fn next_byte(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }

    /// A number in `0..n` (n > 0; a slight modulo bias is fine for tests).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// `len` bytes of noise.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_byte()).collect()
    }
}

/// xorshift64: shifts 13, 7, 17; each output is the new state.
#[derive(Clone, Debug)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// From a raw state (zero is made one).
    pub fn new(state: u64) -> XorShift64 {
        XorShift64(state.max(1))
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sequences() {
        // First outputs from state 1, by hand from the definitions.
        let mut s = XorShift64Star::from_state(1);
        let x1 = 1u64 ^ (1 << 25);
        let x1 = x1 ^ (x1 >> 27);
        assert_eq!(s.next_u64(), x1.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let mut x = XorShift64::new(1);
        let mut y = 1u64;
        y ^= y << 13;
        y ^= y >> 7;
        y ^= y << 17;
        assert_eq!(x.next_u64(), y);
        assert_eq!(
            XorShift64Star::from_state(0).next_u64(),
            XorShift64Star::from_state(1).next_u64()
        );
        assert_eq!(XorShift64Star::from_state(9).bytes(3).len(), 3);
    }
}
