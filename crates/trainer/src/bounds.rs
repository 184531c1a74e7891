//! How good a table is against what the data allows, in bits at the fast
//! parse: the single-table [`Ceiling`] (the optimal code of the very
//! pages measured), [`Drift`] (a table against the one its data would
//! train, and when to retrain), and [`ConstraintCost`] (what
//! `--qpl-compatible` costs). It builds reference codes to compare with;
//! it encodes no page and returns no table.

use serde::Serialize;

use cannery_codec::Table;

use crate::error::TrainError;
use crate::histogram::Histogram;
use crate::options::TrainOptions;
use crate::train::table_from_histogram;

/// Retraining is recommended when a table costs this many percent more
/// bits per page than the corpus' own optimal table.
///
/// Why 3 %: on corpora/fleet-snapshots the fleet table costs 2.8–3.8 %
/// more bits per page than each workload's own table (gcc-build 2.8,
/// jvm-index 2.9, redis 2.9, node-service 3.5, python-etl 3.8), and the
/// own tables beat the fleet table by 2.2–4.5 % in held-out ratio, while
/// smoothing choices and the train/test split move results by under 0.1 %.
/// A drift above 3 % therefore means the data differs from the table's as
/// much as one workload differs from the fleet mix: a table trained on the
/// current data recovers about that much ratio.
pub const RETRAIN_THRESHOLD_PERCENT: f64 = 3.0;

/// How far a table has drifted from what the data would train.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drift {
    /// Pages measured.
    pub pages: u64,
    /// Bits per page under the table (fast parse, extra bits included).
    pub table_bits_per_page: f64,
    /// Bits per page under the corpus' own optimal (smoothed) table.
    pub optimal_bits_per_page: f64,
    /// The difference.
    pub drift_bits_per_page: f64,
    /// The difference relative to the optimal table, in percent.
    pub drift_percent: f64,
    /// Threshold used, in percent.
    pub threshold_percent: f64,
    /// Whether retraining is recommended.
    pub retrain: bool,
    /// Id of the corpus' own table.
    pub optimal_table_id: String,
}

/// How much of what a single table could gain over the fixed code a table
/// gains, on the same pages at the `fast` parse, in bits.
///
/// At the fast parse the tokens do not depend on the table, so no table can
/// code these pages in fewer bits than the optimal code of their own symbol
/// counts (built under the same constraints, every required symbol coded,
/// rare and unseen symbols at a negligible weight): that is the ceiling. A
/// canned table trained on other pages of the same workload can only
/// approach it; when the ceiling itself is below a ratio target, no table
/// reaches the target at that parse and only a different parse (or several
/// tables) can. Bits are summed before any byte padding, so gains are
/// within about 0.1 % of the ratio gains computed from padded sizes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ceiling {
    /// Pages measured.
    pub pages: u64,
    /// Bits under the RFC 1951 fixed code, its 3 block-header bits per page included.
    pub fixed_bits: u64,
    /// Bits under the evaluated table.
    pub table_bits: u64,
    /// Bits under the optimal code of these pages' own counts.
    pub optimal_bits: u64,
    /// `fixed_bits / table_bits - 1`, in percent.
    pub table_gain_percent: f64,
    /// `fixed_bits / optimal_bits - 1`, in percent: the most any single
    /// table can gain over fixed on these pages at this parse.
    pub ceiling_gain_percent: f64,
}

impl Ceiling {
    /// The ceiling for `table` on fast-parse counts `h`.
    pub fn of(table: &Table, h: &Histogram, opts: &TrainOptions) -> Ceiling {
        let own = TrainOptions {
            smoothing: Some(crate::smoothing::Smoothing::Uniform { mass: 0.0 }),
            ..*opts
        };
        let optimal = crate::train::lengths_from_counts(&h.counts, &own);
        let fixed = Table::fixed();
        Ceiling::from_bits(
            h.pages,
            crate::train::bits_under(&h.counts, &fixed) + FIXED_HEADER_BITS * h.pages,
            crate::train::bits_under(&h.counts, table),
            h.counts.bits(&optimal.litlen, &optimal.dist),
        )
    }

    /// The ceiling of several page sets together (each with its own table).
    pub fn sum(parts: &[Ceiling]) -> Ceiling {
        let total = |f: fn(&Ceiling) -> u64| parts.iter().map(f).sum::<u64>();
        Ceiling::from_bits(
            total(|c| c.pages),
            total(|c| c.fixed_bits),
            total(|c| c.table_bits),
            total(|c| c.optimal_bits),
        )
    }

    fn from_bits(pages: u64, fixed_bits: u64, table_bits: u64, optimal_bits: u64) -> Ceiling {
        let gain = |b: u64| {
            if b == 0 {
                0.0
            } else {
                round4(100.0 * (fixed_bits as f64 / b as f64 - 1.0))
            }
        };
        Ceiling {
            pages,
            fixed_bits,
            table_bits,
            optimal_bits,
            table_gain_percent: gain(table_bits),
            ceiling_gain_percent: gain(optimal_bits),
        }
    }
}

/// What `--qpl-compatible` costs: fast-parse bits of the evaluated
/// held-out pages under the table trained with the constraint, against the
/// table trained from the same statistics and options without it (both
/// straight from the histogram, before any `best` refinement).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ConstraintCost {
    /// Bits under the unconstrained table.
    pub unconstrained_bits: u64,
    /// Bits under the QPL-loadable table.
    pub constrained_bits: u64,
    /// `constrained_bits / unconstrained_bits - 1`, in percent. On the
    /// training pages it is ≥ 0; on held-out pages it may be slightly
    /// negative.
    pub cost_percent: f64,
}

impl ConstraintCost {
    /// The cost on fast-parse counts `eval` of tables trained on `train`
    /// with `opts` (whose `qpl_compatible` is ignored: both are built).
    pub fn of(train: &Histogram, eval: &Histogram, opts: &TrainOptions) -> ConstraintCost {
        let with = |qpl: bool| {
            let mut o = *opts;
            o.qpl_compatible = qpl;
            let l = crate::train::lengths_from_counts(&train.counts, &o);
            eval.counts.bits(&l.litlen, &l.dist)
        };
        ConstraintCost::from_bits(with(false), with(true))
    }

    /// Several page sets together.
    pub fn sum(parts: &[ConstraintCost]) -> ConstraintCost {
        ConstraintCost::from_bits(
            parts.iter().map(|c| c.unconstrained_bits).sum(),
            parts.iter().map(|c| c.constrained_bits).sum(),
        )
    }

    fn from_bits(unconstrained_bits: u64, constrained_bits: u64) -> ConstraintCost {
        ConstraintCost {
            unconstrained_bits,
            constrained_bits,
            cost_percent: if unconstrained_bits == 0 {
                0.0
            } else {
                round4(100.0 * (constrained_bits as f64 / unconstrained_bits as f64 - 1.0))
            },
        }
    }
}

/// BFINAL + BTYPE: the header a fixed-code deflate block carries and an IAA
/// canned stream does not.
const FIXED_HEADER_BITS: u64 = 3;

/// Drift of `table` on statistics `h` (gathered at the fast parse).
pub fn drift(table: &Table, h: &Histogram, opts: &TrainOptions) -> Result<Drift, TrainError> {
    let o = TrainOptions {
        min_pages: 1,
        ..*opts
    };
    let own = table_from_histogram(h, &o, "corpus")?;
    let pages = h.pages.max(1) as f64;
    let t = crate::train::bits_under(&h.counts, table) as f64 / pages;
    let b = crate::train::bits_under(&h.counts, &own) as f64 / pages;
    let pct = 100.0 * (t - b) / b.max(1.0);
    Ok(Drift {
        pages: h.pages,
        table_bits_per_page: round4(t),
        optimal_bits_per_page: round4(b),
        drift_bits_per_page: round4(t - b),
        drift_percent: round4(pct),
        threshold_percent: RETRAIN_THRESHOLD_PERCENT,
        retrain: pct > RETRAIN_THRESHOLD_PERCENT,
        optimal_table_id: own.id(),
    })
}

/// `x` rounded to four decimals, as reports print percentages and bits.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
