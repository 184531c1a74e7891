//! Histogram → symbol weights: smoothing of zero and rare counts, so that
//! every symbol a page may need gets a code (all 286 literal/length symbols,
//! distance symbols 0..=23, or all 30 on request) and so that symbols the
//! training pages lacked do not get needlessly long codes on held-out pages.
//!
//! Three documented families ([`Smoothing`]):
//! - `add-one`: +1 on every required symbol (what QPL and ISA-L do).
//! - `uniform:M`: pseudo-counts totalling `M` × the alphabet's total count,
//!   spread evenly over the required symbols (add-δ with δ proportional to
//!   the data, so its effect does not vanish on big corpora).
//! - `prior:M`: pseudo-counts totalling `M` × the alphabet's total count,
//!   spread in proportion to a prior distribution: 2^-length of the kernel's
//!   2024 canned table (a blend toward a table trained on SPEC CPU 2017
//!   pages); symbols that table leaves uncoded get the prior of its longest code.
//!
//! Weights are integers (counts scaled by [`SCALE`]) so that code
//! construction stays exact and deterministic. [`crate::train::evaluate_smoothings`]
//! measures held-out bits per page for each candidate; the default
//! ([`Smoothing::DEFAULT`]) was chosen that way (see `DEFAULT`'s note).
//! Code lengths themselves are built in [`crate::code_lengths`].

use cannery_codec::constants::{NUM_DIST, NUM_DIST_4K, NUM_LITLEN};
use cannery_codec::Table;

use crate::histogram::SymbolCounts;

/// Counts are multiplied by this before pseudo-counts are added, so that
/// fractional pseudo-counts keep 10 bits of precision.
pub const SCALE: u64 = 1024;

/// How zero and rare counts are smoothed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Smoothing {
    /// +1 on every required symbol.
    AddOne,
    /// Pseudo-count mass `mass` × total, spread evenly.
    Uniform {
        /// Fraction of the alphabet's total count added as pseudo-counts.
        mass: f64,
    },
    /// Pseudo-count mass `mass` × total, spread like the kernel-2024 table.
    Prior {
        /// Fraction of the alphabet's total count added as pseudo-counts.
        mass: f64,
    },
}

impl Smoothing {
    /// The default: `prior:0.005`.
    ///
    /// Chosen by held-out measurement on corpora/fleet-snapshots (5
    /// workloads, 5360 held-out pages, fast parse, each workload's own
    /// table): prior:0.005 gave 7858.76 bits/page, the lowest of the
    /// candidates; add-one 7858.81, uniform:0.001 7858.79, prior:0.001
    /// 7858.80, uniform:0.005 7859.04, prior:0.02 7859.02, uniform:0.02
    /// 7859.67 (+0.01 %), prior:0.05 7865.50 (+0.09 %). Held-out pages
    /// rarely use symbols the training pages lacked, so any light smoothing
    /// is within 0.01 %; heavy smoothing costs. `cannery train` repeats the
    /// measurement in its report's `smoothing` section on every run.
    pub const DEFAULT: Smoothing = Smoothing::Prior { mass: 0.005 };

    /// The smoothing a table trained on `parse` gets unless one is asked
    /// for: [`Smoothing::DEFAULT`] for cannery's parses, `add-one` for a
    /// library target (`qpl-default`, `qpl-high`, `isal`), the libraries'
    /// own rule (every zero count becomes 1).
    ///
    /// Measured on corpora/fleet-snapshots (`cannery train --target T
    /// --smoothing S`, the default 1000-page held-out sample, under the
    /// library's compressor): bytes cannery's table saves against the
    /// library's own table with add-one / with prior:0.005, workloads
    /// gcc-build, jvm-index, node-service, python-etl, redis:
    /// - qpl-default: 15866/15805, 37713/37543, 7584/7555, 9095/9058,
    ///   31893/31859 (add-one better on all five);
    /// - qpl-high: −6/−42, 0/−34, 56/53, 213/212, 110/70 (on every
    ///   held-out page, `--eval-pages 0`, add-one: 2, 0, 56, 274, 110);
    /// - isal: 1058/1040, 852/1196, 993/998, 512/487, 321/302.
    ///
    /// The libraries give a zero count the code a count of 1 gets; at QPL's
    /// high level its statistics function parses nearly like its compressor,
    /// so its own table and add-one's nearly coincide (on jvm-index they are
    /// the same table).
    pub fn for_parse(parse: crate::histogram::ParseModel) -> Smoothing {
        if parse.feature().is_some() {
            Smoothing::AddOne
        } else {
            Smoothing::DEFAULT
        }
    }

    /// The candidates `cannery train` measures on held-out pages.
    pub const CANDIDATES: [Smoothing; 8] = [
        Smoothing::AddOne,
        Smoothing::Uniform { mass: 0.001 },
        Smoothing::Uniform { mass: 0.005 },
        Smoothing::Uniform { mass: 0.02 },
        Smoothing::Prior { mass: 0.001 },
        Smoothing::Prior { mass: 0.005 },
        Smoothing::Prior { mass: 0.02 },
        Smoothing::Prior { mass: 0.05 },
    ];

    /// Weights for the literal/length and distance alphabets.
    /// Required symbols always get a weight of at least 1; others keep
    /// their (scaled) counts.
    pub fn weights(
        &self,
        counts: &SymbolCounts,
        all_distances: bool,
    ) -> ([u64; NUM_LITLEN], [u64; NUM_DIST]) {
        let d_required = if all_distances { NUM_DIST } else { NUM_DIST_4K };
        let mut ll = [0u64; NUM_LITLEN];
        let mut d = [0u64; NUM_DIST];
        self.apply(&counts.litlen, NUM_LITLEN, &prior_litlen(), &mut ll);
        self.apply(&counts.dist, d_required, &prior_dist(), &mut d);
        (ll, d)
    }

    fn apply(&self, counts: &[u64], required: usize, prior: &[f64], out: &mut [u64]) {
        let total: u64 = counts.iter().sum();
        for (i, (o, &c)) in out.iter_mut().zip(counts).enumerate() {
            let is_required = i < required;
            *o = match *self {
                Smoothing::AddOne => c * SCALE + if is_required { SCALE } else { 0 },
                Smoothing::Uniform { mass } | Smoothing::Prior { mass } => {
                    let share = if !is_required {
                        0.0
                    } else if let Smoothing::Uniform { .. } = self {
                        1.0 / required as f64
                    } else {
                        prior[i] / prior[..required].iter().sum::<f64>()
                    };
                    let pseudo = (mass * total as f64 * share * SCALE as f64).round() as u64;
                    c * SCALE + pseudo
                }
            };
            if is_required && *o == 0 {
                *o = 1;
            }
        }
    }
}

fn prior_from(lengths: &[u8]) -> Vec<f64> {
    let longest = lengths.iter().copied().max().unwrap_or(15).max(1);
    lengths
        .iter()
        .map(|&l| 0.5f64.powi(if l == 0 { longest } else { l } as i32))
        .collect()
}

fn prior_litlen() -> Vec<f64> {
    prior_from(&Table::kernel_2024().lengths().litlen)
}

fn prior_dist() -> Vec<f64> {
    prior_from(&Table::kernel_2024().lengths().dist)
}

impl std::fmt::Display for Smoothing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Smoothing::AddOne => f.write_str("add-one"),
            Smoothing::Uniform { mass } => write!(f, "uniform:{mass}"),
            Smoothing::Prior { mass } => write!(f, "prior:{mass}"),
        }
    }
}

impl std::str::FromStr for Smoothing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown smoothing {s:?} (expected add-one, uniform:MASS or prior:MASS, \
                 MASS a fraction such as 0.005)"
            )
        };
        if s == "add-one" {
            return Ok(Smoothing::AddOne);
        }
        let (kind, mass) = s.split_once(':').ok_or_else(bad)?;
        let mass: f64 = mass.parse().map_err(|_| bad())?;
        if !(0.0..=1.0).contains(&mass) {
            return Err(format!("smoothing mass {mass} must be between 0 and 1"));
        }
        match kind {
            "uniform" => Ok(Smoothing::Uniform { mass }),
            "prior" => Ok(Smoothing::Prior { mass }),
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_required_symbol_gets_weight_and_counts_dominate() {
        let mut c = SymbolCounts::default();
        c.litlen[b'a' as usize] = 1000;
        c.litlen[256] = 10;
        c.litlen[257] = 5;
        c.dist[3] = 5;
        for s in Smoothing::CANDIDATES {
            let (ll, d) = s.weights(&c, false);
            assert!(ll.iter().all(|&w| w > 0), "{s}");
            assert!(d[..24].iter().all(|&w| w > 0), "{s}");
            assert!(d[24..].iter().all(|&w| w == 0), "{s}");
            assert!(ll[b'a' as usize] > ll[b'b' as usize] * 10, "{s}");
            let (_, d_all) = s.weights(&c, true);
            assert!(d_all.iter().all(|&w| w > 0), "{s}");
        }
    }

    #[test]
    fn pseudo_mass_is_the_stated_fraction() {
        let mut c = SymbolCounts::default();
        c.litlen[0] = 1_000_000;
        let (ll, _) = Smoothing::Uniform { mass: 0.01 }.weights(&c, false);
        let pseudo: u64 = ll.iter().sum::<u64>() - 1_000_000 * SCALE;
        let want = 10_000 * SCALE;
        assert!(pseudo.abs_diff(want) < 300, "{pseudo} vs {want}");
        let (ll, _) = Smoothing::Prior { mass: 0.01 }.weights(&c, false);
        // The prior favours what the kernel table codes short: literal 0 (5 bits) over 255.
        assert!(ll[1] > ll[200]);
    }

    #[test]
    fn names_round_trip() {
        for s in Smoothing::CANDIDATES {
            assert_eq!(s.to_string().parse::<Smoothing>().unwrap(), s);
        }
        assert!("prior:2".parse::<Smoothing>().is_err());
        assert!("gauss:0.1".parse::<Smoothing>().is_err());
    }
}
