//! The reclaim amount of `--cold reclaim:AMOUNT`: a share of the
//! workload's anonymous memory (`50%`) or a size (`256M`).

use crate::PAGE_SIZE;

/// How much of the workload's anonymous memory to reclaim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    /// A share (0..=1).
    Fraction(f64),
    /// Bytes.
    Bytes(u64),
}

impl Amount {
    /// Parses `reclaim:50%` or `reclaim:256M` (K, M, G; a bare number is
    /// bytes).
    pub fn parse(s: &str) -> std::result::Result<Amount, String> {
        let v = s.strip_prefix("reclaim:").ok_or_else(|| {
            format!("expected reclaim:AMOUNT (e.g. reclaim:50% or reclaim:256M), got {s:?}")
        })?;
        if let Some(p) = v.strip_suffix('%') {
            let f: f64 = p.parse().map_err(|_| format!("bad percentage {v:?}"))?;
            if !(f > 0.0 && f <= 100.0) {
                return Err(format!("the percentage must be in (0, 100], got {v:?}"));
            }
            return Ok(Amount::Fraction(f / 100.0));
        }
        let (num, mul) = match v.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => {
                let mul = match c.to_ascii_uppercase() {
                    'K' => 1u64 << 10,
                    'M' => 1 << 20,
                    'G' => 1 << 30,
                    _ => return Err(format!("bad size unit in {v:?} (K, M, G or %)")),
                };
                (&v[..i], mul)
            }
            _ => (v, 1),
        };
        let n: u64 = num.parse().map_err(|_| format!("bad amount {v:?}"))?;
        match n.checked_mul(mul) {
            Some(b) if b >= PAGE_SIZE as u64 => Ok(Amount::Bytes(b)),
            Some(_) => Err(format!("the amount {v:?} is less than a page")),
            None => Err(format!("the amount {v:?} is too large")),
        }
    }

    /// The pages to reclaim of `anon` bytes of anonymous memory.
    pub fn pages(&self, anon: u64) -> u64 {
        let anon_pages = anon / PAGE_SIZE as u64;
        match *self {
            Amount::Fraction(f) => (anon_pages as f64 * f).round() as u64,
            Amount::Bytes(b) => (b / PAGE_SIZE as u64).min(anon_pages),
        }
    }

    /// As given (`50%`, `268435456`).
    pub fn label(&self) -> String {
        match *self {
            Amount::Fraction(f) => format!("{}%", f * 100.0),
            Amount::Bytes(b) => b.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_as_shares_or_sizes() {
        assert_eq!(Amount::parse("reclaim:50%"), Ok(Amount::Fraction(0.5)));
        assert_eq!(Amount::parse("reclaim:256M"), Ok(Amount::Bytes(256 << 20)));
        assert_eq!(Amount::parse("reclaim:8k"), Ok(Amount::Bytes(8192)));
        assert_eq!(Amount::parse("reclaim:4096"), Ok(Amount::Bytes(4096)));
        for bad in [
            "50%",
            "reclaim:",
            "reclaim:0%",
            "reclaim:101%",
            "reclaim:12X",
            "reclaim:100",
            "reclaim:99999999999999999G",
        ] {
            assert!(Amount::parse(bad).is_err(), "{bad}");
        }
        // A share of the anonymous pages; a size is capped at them.
        assert_eq!(Amount::Fraction(0.5).pages(83 << 20), 10624);
        assert_eq!(Amount::Bytes(1 << 30).pages(40960), 10);
        assert_eq!(Amount::Fraction(0.5).label(), "50%");
    }
}
