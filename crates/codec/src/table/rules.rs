//! The one owner of the rules a table must follow for each consumer: our
//! encoder and decoder, standard inflaters, IAA hardware, QPL, and ISA-L's
//! stock build. The trainer's constraints, the exporters, the backends'
//! capabilities and `cannery validate` all ask here; nothing else decides
//! whether a table "is compatible".
//!
//! The rules (docs/canned-format.md §1, §3, §7):
//! - [`Rule::Decodable`]: no alphabet over-subscribed, lengths ≤ 15 (every
//!   [`Table`] is, by construction; stated so reports can list it).
//! - [`Rule::Encodable`]: every literal/length symbol and distance symbols
//!   0..=23 coded, so any 4 KiB page can be encoded.
//! - [`Rule::Standard`]: header ‖ body is standard deflate (complete codes).
//! - [`Rule::Iaa`]: IAA hardware: all 286 literal/length symbols and
//!   distance symbols 0..=23 coded, complete codes.
//! - [`Rule::QplLoadable`]: QPL builds tables from histograms, coding every
//!   one of the 286 + 30 symbols with complete codes, and rebuilds any table
//!   over the 56-bit budget ([`BitBudget`]) with limits 13/12: a table loads
//!   unchanged only if it codes all 316 symbols, is complete and fits.
//! - [`Rule::IsalStock`]: the same conditions, for different reasons: ISA-L
//!   as distributions build it has a 32 KiB window, so igzip may emit any
//!   distance or length symbol, and writes each match in one unchecked
//!   56-bit write.
//!
//! This module only judges lengths; it builds one thing, the cheapest code
//! that fits the budget ([`budget_lengths`]), because that search is the
//! rule's other face and both the trainer and tests need it.

use serde::Serialize;

use super::{CodeLengths, Table, KRAFT_COMPLETE};
use crate::constants::{NUM_DIST, NUM_DIST_4K, NUM_LITLEN};
use crate::huffman::{kraft_sum, limited_code_lengths};
use crate::token::{DIST_EXTRA, LENGTH_EXTRA};

/// igzip's `MAX_BITBUF_BIT_WRITE`: the bits one literal/length code plus one
/// length (with extra bits) plus one distance (with extra bits) may take.
pub const BITBUF_LIMIT: u32 = 56;
/// igzip's `MAX_SAFE_LIT_CODE_LEN`: the literal/length limit it rebuilds with.
pub const SAFE_LITLEN_LIMIT: u8 = 13;
/// igzip's `MAX_SAFE_DIST_CODE_LEN`: the distance limit it rebuilds with.
pub const SAFE_DIST_LIMIT: u8 = 12;

/// The three terms of the 56-bit budget, computed exactly as ISA-L's
/// `are_hufftables_useable` (igzip/huff_codes.c, also inside QPL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BitBudget {
    /// Longest code over all 286 literal/length symbols (literals,
    /// end-of-block and length symbols alike).
    pub lit: u32,
    /// Max over length symbols 257..=284 of code length + extra bits.
    pub len: u32,
    /// Max over all 30 distance symbols of code length + extra bits; an
    /// uncoded symbol counts its extra bits alone, as in ISA-L.
    pub dist: u32,
}

impl BitBudget {
    /// Measures `lengths`.
    pub fn of(lengths: &CodeLengths) -> BitBudget {
        let l = lengths;
        let lit = l.litlen.iter().map(|&x| x as u32).max().unwrap_or(0);
        let len = (257..=284)
            .map(|s| l.litlen[s] as u32 + LENGTH_EXTRA[s - 257] as u32)
            .max()
            .unwrap_or(0);
        let dist = (0..NUM_DIST)
            .map(|s| l.dist[s] as u32 + DIST_EXTRA[s] as u32)
            .max()
            .unwrap_or(0);
        BitBudget { lit, len, dist }
    }

    /// The sum of the three terms.
    pub fn total(&self) -> u32 {
        self.lit + self.len + self.dist
    }

    /// True if the total is within [`BITBUF_LIMIT`].
    pub fn fits(&self) -> bool {
        self.total() <= BITBUF_LIMIT
    }
}

impl std::fmt::Display for BitBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} + {} + {} = {} bits",
            self.lit,
            self.len,
            self.dist,
            self.total()
        )
    }
}

/// A rule a table must follow for some consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A prefix code per alphabet, lengths ≤ 15: our decoder can read it.
    Decodable,
    /// Every literal/length symbol and distance symbols 0..=23 coded: our
    /// encoder can encode any page.
    Encodable,
    /// Header ‖ body is standard deflate (zlib, libdeflate, miniz_oxide, QAT).
    Standard,
    /// IAA hardware's canned-mode rules.
    Iaa,
    /// QPL loads the table unchanged.
    QplLoadable,
    /// ISA-L as distributions build it (32 KiB window) writes correct streams.
    IsalStock,
}

impl Rule {
    /// Every rule, in the order reports list them.
    pub const ALL: [Rule; 6] = [
        Rule::Decodable,
        Rule::Encodable,
        Rule::Standard,
        Rule::Iaa,
        Rule::QplLoadable,
        Rule::IsalStock,
    ];

    /// Kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Decodable => "decodable",
            Rule::Encodable => "encodable",
            Rule::Standard => "standard",
            Rule::Iaa => "iaa",
            Rule::QplLoadable => "qpl-loadable",
            Rule::IsalStock => "isal-stock",
        }
    }

    /// The rule named `name`.
    pub fn parse(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// One line saying what the rule asks.
    pub fn summary(self) -> &'static str {
        match self {
            Rule::Decodable => "prefix codes of at most 15 bits (any decoder can read streams)",
            Rule::Encodable => {
                "every literal/length symbol and distance symbols 0..=23 coded (any page encodes)"
            }
            Rule::Standard => "complete codes: header + canned body is standard raw deflate",
            Rule::Iaa => {
                "IAA canned mode: all 286 literal/length and distance 0..=23 coded, complete codes"
            }
            Rule::QplLoadable => {
                "QPL loads it unchanged: all 286 + 30 symbols coded, complete, 56-bit budget"
            }
            Rule::IsalStock => {
                "stock ISA-L (32 KiB window) writes correct streams: all 286 + 30 symbols coded, \
                 complete, 56-bit budget"
            }
        }
    }

    /// `Ok` if `table` follows the rule, else every reason it does not.
    pub fn check(self, table: &Table) -> Result<(), String> {
        let reasons = self.violations(table);
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons.join("; "))
        }
    }

    /// Why `table` breaks the rule (empty if it follows it).
    pub fn violations(self, table: &Table) -> Vec<String> {
        let l = table.lengths();
        match self {
            Rule::Decodable => {
                let mut v = Vec::new();
                let (ll, d) = table.kraft();
                if ll > KRAFT_COMPLETE {
                    v.push("the literal/length code is over-subscribed".into());
                }
                if d > KRAFT_COMPLETE {
                    v.push("the distance code is over-subscribed".into());
                }
                v
            }
            // The encoder's own check decides; this only words the answer.
            Rule::Encodable if table.first_uncoded_symbol().is_none() => Vec::new(),
            Rule::Encodable => {
                let mut v = uncoded(&l.litlen, "literal/length");
                v.extend(uncoded(&l.dist[..NUM_DIST_4K], "distance"));
                v
            }
            Rule::Standard => {
                if table.is_standard() || table.is_fixed_code() {
                    Vec::new()
                } else {
                    vec![
                        "codes are incomplete, so header + canned body is not standard deflate"
                            .into(),
                    ]
                }
            }
            Rule::Iaa => table
                .iaa_violations()
                .iter()
                .map(|r| r.to_string())
                .collect(),
            Rule::QplLoadable => every_symbol_within_budget(
                table,
                "QPL codes every symbol, so it would change the table",
                "QPL would rebuild the table with 13/12-bit limits",
            ),
            Rule::IsalStock => every_symbol_within_budget(
                table,
                "stock ISA-L (32 KiB window) may emit every one of them and writes an uncoded \
                 symbol as zero bits, a corrupt stream",
                "igzip writes a match in one unchecked 56-bit write and would corrupt it",
            ),
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// "`alphabet` symbols 3, 24..=29 have no code" for the uncoded symbols of
/// `lengths`, or nothing.
fn uncoded(lengths: &[u8], alphabet: &str) -> Vec<String> {
    let missing: Vec<usize> = (0..lengths.len()).filter(|&s| lengths[s] == 0).collect();
    match missing.as_slice() {
        [] => Vec::new(),
        [s] => vec![format!("{alphabet} symbol {s} has no code")],
        _ => vec![format!(
            "{alphabet} symbols {} have no code",
            symbol_ranges(&missing)
        )],
    }
}

/// `syms` (ascending) as `a..=b` runs joined by commas, e.g. `3, 24..=29`.
pub fn symbol_ranges(syms: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < syms.len() {
        let mut j = i;
        while j + 1 < syms.len() && syms[j + 1] == syms[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            syms[i].to_string()
        } else {
            format!("{}..={}", syms[i], syms[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The shared conditions of [`Rule::QplLoadable`] and [`Rule::IsalStock`].
fn every_symbol_within_budget(table: &Table, why_coded: &str, why_budget: &str) -> Vec<String> {
    let l = table.lengths();
    let mut v = uncoded(&l.litlen, "literal/length");
    v.extend(uncoded(&l.dist, "distance"));
    if !v.is_empty() {
        v.push(why_coded.into());
    } else if table.is_fixed_code() {
        v.push(
            "the fixed code is incomplete over 286 + 30 symbols (it counts 286/287 and 30/31)"
                .into(),
        );
    } else {
        for (alphabet, lengths) in [("literal/length", &l.litlen[..]), ("distance", &l.dist[..])] {
            let k = kraft_sum(lengths);
            if k != KRAFT_COMPLETE {
                v.push(format!(
                    "the {alphabet} code is incomplete (Kraft sum {k}/32768), so inflaters \
                     reject its header and no histogram gives it"
                ));
            }
        }
    }
    let b = BitBudget::of(l);
    if !b.fits() {
        v.push(format!(
            "the 56-bit budget is exceeded: {b}, above the limit of 56 (longest literal/length + \
             longest length with extra bits + longest distance with extra bits); {why_budget}"
        ));
    }
    v
}

/// Every rule `table` breaks, with the reasons.
pub fn broken(table: &Table) -> Vec<(Rule, String)> {
    Rule::ALL
        .into_iter()
        .filter_map(|r| r.check(table).err().map(|e| (r, e)))
        .collect()
}

/// The cheapest code lengths for weights `ll_w`, `d_w` (symbols of weight
/// 0 get no code) with at most `max_len` bits that fit the 56-bit budget.
///
/// Every pair of per-alphabet limits (each up to `max_len`) is tried and
/// the cheapest pair whose code fits wins: optimal among codes with one
/// limit per alphabet (a per-symbol limit could do better). Limits 13/12
/// always fit (13 + 13+5 + 12+13 = 56), so an answer always exists.
pub fn budget_lengths(ll_w: &[u64; NUM_LITLEN], d_w: &[u64; NUM_DIST], max_len: u8) -> CodeLengths {
    let build = |w: &[u64], m: u8| limited_code_lengths(w, m);
    let as_lengths = |ll: &[u8], d: &[u8]| CodeLengths {
        litlen: ll.try_into().expect("286 lengths"),
        dist: d.try_into().expect("30 lengths"),
    };
    let floor = |w: &[u64]| {
        let n = w.iter().filter(|&&x| x > 0).count().max(2);
        (1u8..).find(|&b| (1usize << b) >= n).expect("a limit")
    };
    let ll_codes: Vec<Vec<u8>> = (floor(ll_w)..=max_len).map(|m| build(ll_w, m)).collect();
    let d_codes: Vec<Vec<u8>> = (floor(d_w)..=max_len).map(|m| build(d_w, m)).collect();
    let cost = |w: &[u64], l: &[u8]| -> u128 {
        w.iter().zip(l).map(|(&w, &l)| w as u128 * l as u128).sum()
    };
    let mut best: Option<(u128, CodeLengths)> = None;
    for ll in &ll_codes {
        for d in &d_codes {
            let cand = as_lengths(ll, d);
            if !BitBudget::of(&cand).fits() {
                continue;
            }
            let c = cost(ll_w, ll) + cost(d_w, d);
            if best.as_ref().is_none_or(|(b, _)| c < *b) {
                best = Some((c, cand));
            }
        }
    }
    best.map(|(_, l)| l).unwrap_or_else(|| {
        as_lengths(
            &build(ll_w, SAFE_LITLEN_LIMIT.min(max_len)),
            &build(d_w, SAFE_DIST_LIMIT.min(max_len)),
        )
    })
}

/// A table QPL (and stock ISA-L) load unchanged, as close to `table` as the
/// rules allow: each coded symbol weighted 2^(15 − length), each uncoded one
/// weighted 1, then [`budget_lengths`]. For a table already
/// [`Rule::QplLoadable`] the result has the same lengths.
pub fn qpl_loadable_variant(table: &Table) -> Table {
    let l = table.lengths();
    let w = |x: u8| if x == 0 { 1 } else { 1u64 << (15 - x) };
    let ll_w: [u64; NUM_LITLEN] = std::array::from_fn(|s| w(l.litlen[s]));
    let d_w: [u64; NUM_DIST] = std::array::from_fn(|s| w(l.dist[s]));
    let lengths = budget_lengths(&ll_w, &d_w, 15);
    let mut t = Table::from_lengths(&lengths.litlen, &lengths.dist)
        .expect("package-merge lengths form a valid table");
    t.name = Some(match &table.name {
        Some(n) => format!("{n}-qpl"),
        None => format!("{}-qpl", table.id()),
    });
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An independent transcription of `are_hufftables_useable`: walks the
    /// symbols with the running extra-bit counters ISA-L uses
    /// (LEN_EXTRA_BITS_START 264, interval 4; DIST_EXTRA_BITS_START 3,
    /// interval 2) instead of the token tables.
    fn isal_useable_total(l: &CodeLengths) -> u32 {
        let max_lit = *l.litlen.iter().max().unwrap() as u32;
        let (mut max_len, mut extra, mut gain) = (0u32, 0u32, 264usize);
        for i in 257..285 {
            max_len = max_len.max(l.litlen[i] as u32 + extra);
            if i == gain {
                gain += 4;
                extra += 1;
            }
        }
        let (mut max_dist, mut extra, mut gain) = (0u32, 0u32, 3usize);
        for i in 0..30 {
            max_dist = max_dist.max(l.dist[i] as u32 + extra);
            if i == gain {
                gain += 2;
                extra += 1;
            }
        }
        max_lit + max_len + max_dist
    }

    fn table(ll: &[u8], d: &[u8]) -> Table {
        Table::from_lengths(ll, d).unwrap()
    }

    #[test]
    fn kernel_2024_budget_is_54_bits_and_it_is_iaa_but_not_qpl_loadable() {
        let t = Table::kernel_2024();
        let b = BitBudget::of(t.lengths());
        assert_eq!((b.lit, b.len, b.dist), (15, 20, 19));
        assert_eq!(b.total(), 54);
        assert_eq!(isal_useable_total(t.lengths()), 54);
        assert!(Rule::Iaa.check(&t).is_ok());
        assert!(Rule::Encodable.check(&t).is_ok());
        assert!(Rule::Standard.check(&t).is_ok());
        let e = Rule::QplLoadable.check(&t).unwrap_err();
        assert!(
            e.starts_with("distance symbols 24..=29 have no code"),
            "{e}"
        );
        assert!(Rule::IsalStock
            .check(&t)
            .unwrap_err()
            .contains("32 KiB window"));
    }

    #[test]
    fn fixed_code_budget_and_rules() {
        let t = Table::fixed();
        let b = BitBudget::of(t.lengths());
        assert_eq!((b.lit, b.len, b.dist), (9, 13, 18));
        assert!(Rule::Standard.check(&t).is_ok());
        assert!(Rule::QplLoadable
            .check(&t)
            .unwrap_err()
            .contains("incomplete"));
    }

    /// The longest literal/length code on a length symbol (281) and on
    /// end-of-block: the first term must count them, which a literal-only
    /// maximum (the trainer's old rule) misses.
    #[test]
    fn the_longest_code_may_sit_on_a_length_symbol_or_on_end_of_block() {
        // 254 literals of 8 bits and 32 symbols of 12 bits: a complete code
        // whose longest literal is 12 bits. Then symbols 281..=283 get 15,
        // 15 and 14 bits (an incomplete but decodable code).
        let mut ll = [0u8; 286];
        for (s, l) in ll.iter_mut().enumerate() {
            *l = if s < 254 { 8 } else { 12 };
        }
        ll[281] = 15;
        ll[282] = 15;
        ll[283] = 14;
        let d = [5u8; 30];
        let t = table(&ll, &d);
        let b = BitBudget::of(t.lengths());
        assert_eq!(b.lit, 15, "the longest code is on length symbol 281");
        assert_eq!(b.len, 15 + 5, "symbol 281 has 5 extra bits");
        assert_eq!(b.total(), isal_useable_total(t.lengths()));
        let old_literal_only = *t.lengths().litlen[..256].iter().max().unwrap() as u32;
        assert_eq!(old_literal_only, 12);

        let mut ll2 = ll;
        ll2[281] = 12;
        ll2[282] = 12;
        ll2[283] = 12;
        ll2[256] = 15;
        let t2 = table(&ll2, &d);
        assert_eq!(BitBudget::of(t2.lengths()).lit, 15, "end-of-block counts");
        assert_eq!(
            BitBudget::of(t2.lengths()).total(),
            isal_useable_total(t2.lengths())
        );
    }

    #[test]
    fn uncoded_distance_symbols_count_their_extra_bits() {
        let mut d = [0u8; 30];
        d[0] = 1;
        d[1] = 1;
        let t = table(&[9u8; 286], &d);
        // Distance 29 is uncoded but counts 13 extra bits.
        assert_eq!(BitBudget::of(t.lengths()).dist, 13);
        assert_eq!(
            BitBudget::of(t.lengths()).total(),
            isal_useable_total(t.lengths())
        );
    }

    #[test]
    fn budget_lengths_fit_and_are_never_worse_than_13_12() {
        // Geometric weights: the unconstrained code has 15-bit codes in
        // both alphabets and breaks the budget.
        let ll_w: [u64; NUM_LITLEN] = std::array::from_fn(|i| 1 + (1u64 << (40 - i % 40)));
        let d_w: [u64; NUM_DIST] = std::array::from_fn(|i| 1 + (1u64 << (40 - i)));
        let free = CodeLengths {
            litlen: limited_code_lengths(&ll_w, 15).try_into().unwrap(),
            dist: limited_code_lengths(&d_w, 15).try_into().unwrap(),
        };
        assert!(!BitBudget::of(&free).fits(), "{}", BitBudget::of(&free));
        let l = budget_lengths(&ll_w, &d_w, 15);
        assert!(BitBudget::of(&l).fits());
        let cost = |l: &CodeLengths| -> u128 {
            ll_w.iter()
                .zip(&l.litlen)
                .chain(d_w.iter().zip(&l.dist))
                .map(|(&w, &x)| w as u128 * x as u128)
                .sum()
        };
        let safe = CodeLengths {
            litlen: limited_code_lengths(&ll_w, 13).try_into().unwrap(),
            dist: limited_code_lengths(&d_w, 12).try_into().unwrap(),
        };
        assert!(cost(&l) <= cost(&safe));
        assert!(cost(&l) >= cost(&free));
    }

    #[test]
    fn the_qpl_variant_of_kernel_2024_is_loadable_and_keeps_loadable_tables() {
        let v = qpl_loadable_variant(&Table::kernel_2024());
        assert_eq!(broken(&v), vec![], "{:?}", broken(&v));
        let again = qpl_loadable_variant(&v);
        assert_eq!(again.lengths(), v.lengths());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Every table built from random weights: the budget equals the
        /// independent transcription, `fits` agrees with the limit, and the
        /// QPL rule holds exactly when all 316 symbols are coded, codes are
        /// complete and the budget fits.
        #[test]
        fn rules_agree_with_an_independent_computation(
            ll_w in proptest::collection::vec(0u64..1 << 20, NUM_LITLEN),
            d_w in proptest::collection::vec(0u64..1 << 20, NUM_DIST),
            ll_max in 9u8..=15, d_max in 5u8..=15,
        ) {
            let ll = limited_code_lengths(&ll_w, ll_max);
            let d = limited_code_lengths(&d_w, d_max);
            prop_assume!(ll.iter().filter(|&&x| x > 0).count() >= 2);
            prop_assume!(d.iter().filter(|&&x| x > 0).count() >= 2);
            let t = table(&ll, &d);
            let b = BitBudget::of(t.lengths());
            prop_assert_eq!(b.total(), isal_useable_total(t.lengths()));
            prop_assert_eq!(b.fits(), b.total() <= 56);
            let all = ll.iter().chain(&d).all(|&x| x > 0);
            prop_assert_eq!(Rule::QplLoadable.check(&t).is_ok(), all && b.fits());
            prop_assert_eq!(Rule::IsalStock.check(&t).is_ok(), all && b.fits());
            let fitted = budget_lengths(
                &ll_w.clone().try_into().unwrap(),
                &d_w.clone().try_into().unwrap(),
                15,
            );
            prop_assert!(BitBudget::of(&fitted).fits());
        }
    }
}
