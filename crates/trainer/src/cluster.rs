//! K tables for one set of pages: clusters training pages by which table
//! codes them in the fewest bits (Lloyd-style, like k-means with "bits under
//! the cluster's table" as the distance), so a compressor can pick the best
//! of K tables per page (multiple compressed tiers).
//!
//! Seeding is k-means++-like and deterministic for a seed: the first table
//! is trained on all pages; each next one starts from a page drawn with
//! probability proportional to the square of its regret (its bits under the
//! best table so far minus its bits under its own table). Then: assign each
//! page to its cheapest table (ties to the lower index), rebuild each table
//! from its pages' summed counts, until no page moves (at most
//! [`MAX_ITERATIONS`]). The held-out gain of best-of-K is measured by
//! `cannery_lab::evaluate`, not here.

use rayon::prelude::*;

use cannery_codec::Table;

use crate::error::TrainError;
use crate::histogram::SymbolCounts;
use crate::options::TrainOptions;
use crate::pages::splitmix_finalize;
use crate::scan::ScanCounts;
use crate::train::lengths_from_counts;

/// Most Lloyd iterations.
pub const MAX_ITERATIONS: usize = 20;
/// Largest K.
pub const MAX_TABLES: usize = 16;

/// K tables and how the training pages fell into them.
#[derive(Clone, Debug)]
pub struct Clustering {
    /// The tables, largest cluster first.
    pub tables: Vec<Table>,
    /// Training pages assigned to each table.
    pub pages_per_table: Vec<u64>,
    /// Lloyd iterations run.
    pub iterations: usize,
    /// Training bits with one table for all pages.
    pub single_table_bits: u64,
    /// Training bits with each page on its best table.
    pub best_of_k_bits: u64,
}

fn dense(l: &cannery_codec::CodeLengths) -> [u8; 316] {
    l.to_bytes()
}

fn sum_counts<'a>(pages: impl Iterator<Item = &'a ScanCounts>) -> SymbolCounts {
    let mut c = SymbolCounts::default();
    for p in pages {
        p.add_to(&mut c);
    }
    c
}

/// Clusters `pages` into `k` tables. `name` prefixes the tables' names
/// (`<name>-0`, ...).
pub fn cluster(
    pages: &[ScanCounts],
    k: usize,
    seed: u64,
    opts: &TrainOptions,
    name: &str,
) -> Result<Clustering, TrainError> {
    if k == 0 || k > MAX_TABLES {
        return Err(TrainError::BadTableCount {
            found: k,
            max: MAX_TABLES,
        });
    }
    let needed = (k as u64) * opts.min_pages;
    if (pages.len() as u64) < needed {
        return Err(TrainError::TooFewPages {
            what: format!("{name} ({k} tables)"),
            found: pages.len() as u64,
            total: pages.len() as u64,
            same_filled: 0,
            held_out: 0,
            needed,
        });
    }
    let all = sum_counts(pages.iter());
    let mut centers: Vec<[u8; 316]> = vec![dense(&lengths_from_counts(&all, opts))];
    let single: Vec<u64> = pages.par_iter().map(|p| p.bits(&centers[0])).collect();
    let single_table_bits: u64 = single.iter().sum();

    // Seeding.
    let own: Vec<u64> = pages
        .par_iter()
        .map(|p| {
            let mut c = SymbolCounts::default();
            p.add_to(&mut c);
            p.bits(&dense(&lengths_from_counts(&c, opts)))
        })
        .collect();
    let mut best = single.clone();
    let mut state = seed;
    while centers.len() < k {
        let regret: Vec<f64> = best
            .iter()
            .zip(&own)
            .map(|(&b, &o)| {
                let r = b.saturating_sub(o) as f64;
                r * r
            })
            .collect();
        let total: f64 = regret.iter().sum();
        state = splitmix_finalize(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
        let pick = if total > 0.0 {
            let target = (state >> 11) as f64 / (1u64 << 53) as f64 * total;
            let mut acc = 0.0;
            regret
                .iter()
                .position(|&r| {
                    acc += r;
                    acc > target
                })
                .unwrap_or(pages.len() - 1)
        } else {
            (state % pages.len() as u64) as usize
        };
        let mut c = SymbolCounts::default();
        pages[pick].add_to(&mut c);
        let center = dense(&lengths_from_counts(&c, opts));
        for (b, p) in best.iter_mut().zip(pages) {
            *b = (*b).min(p.bits(&center));
        }
        centers.push(center);
    }

    // Lloyd iterations.
    let mut assign: Vec<usize> = vec![usize::MAX; pages.len()];
    let mut iterations = 0;
    loop {
        let next: Vec<usize> = pages
            .par_iter()
            .map(|p| {
                let mut bi = 0;
                let mut bb = u64::MAX;
                for (i, c) in centers.iter().enumerate() {
                    let b = p.bits(c);
                    if b < bb {
                        bb = b;
                        bi = i;
                    }
                }
                bi
            })
            .collect();
        let moved = next != assign;
        assign = next;
        if !moved || iterations >= MAX_ITERATIONS {
            break;
        }
        iterations += 1;
        for (i, center) in centers.iter_mut().enumerate() {
            let members = pages.iter().zip(&assign).filter(|(_, &a)| a == i);
            let c = sum_counts(members.map(|(p, _)| p));
            if c.litlen_total() > 0 {
                *center = dense(&lengths_from_counts(&c, opts));
            }
        }
    }
    let best_of_k_bits: u64 = pages
        .par_iter()
        .map(|p| centers.iter().map(|c| p.bits(c)).min().unwrap_or(0))
        .sum();

    // Order clusters by size (then by lengths) so names are stable.
    let mut order: Vec<(u64, usize)> = (0..k)
        .map(|i| (assign.iter().filter(|&&a| a == i).count() as u64, i))
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(centers[a.1].cmp(&centers[b.1])));
    let mut tables = Vec::with_capacity(k);
    let mut pages_per_table = Vec::with_capacity(k);
    for (rank, &(n, i)) in order.iter().enumerate() {
        let l = &centers[i];
        let mut t = Table::from_lengths(&l[..286], &l[286..])?;
        t.check_iaa().map_err(TrainError::NotIaaSafe)?;
        t.name = Some(format!("{name}-{rank}"));
        t.provenance.source = Some("trained (clustered)".into());
        t.provenance.generator = Some(crate::train::GENERATOR.into());
        let mut m = opts.provenance_map();
        m.insert("cluster".into(), rank.into());
        m.insert("clusters".into(), k.into());
        m.insert("seed".into(), seed.into());
        m.insert("pages".into(), n.into());
        t.provenance.training = m;
        tables.push(t);
        pages_per_table.push(n);
    }
    Ok(Clustering {
        tables,
        pages_per_table,
        iterations,
        single_table_bits,
        best_of_k_bits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gather::Parser;
    use crate::histogram::ParseModel;
    use crate::testutil::workload_pages;

    fn counts_of(pages: &[Vec<u8>]) -> Vec<ScanCounts> {
        let mut p = Parser::new(ParseModel::Fast, None);
        pages
            .iter()
            .map(|pg| {
                let mut c = SymbolCounts::default();
                p.count(pg, &mut c).unwrap();
                ScanCounts::from_counts(&c)
            })
            .collect()
    }

    #[test]
    fn two_kinds_of_pages_get_two_tables_and_best_of_two_wins() {
        let mut pages = workload_pages(80, 0, 41);
        pages.extend(workload_pages(80, 1, 42));
        let pc = counts_of(&pages);
        let c = cluster(&pc, 2, 7, &TrainOptions::default(), "t").unwrap();
        assert_eq!(c.tables.len(), 2);
        assert_eq!(c.pages_per_table.iter().sum::<u64>(), 160);
        assert!(
            c.pages_per_table.iter().all(|&n| n >= 60),
            "{:?}",
            c.pages_per_table
        );
        assert!(
            (c.best_of_k_bits as f64) < 0.97 * c.single_table_bits as f64,
            "{} vs {}",
            c.best_of_k_bits,
            c.single_table_bits
        );
        for t in &c.tables {
            assert_eq!(t.check_iaa(), Ok(()));
        }
    }

    #[test]
    fn clustering_is_deterministic_and_order_free_in_outcome() {
        let mut pages = workload_pages(60, 0, 43);
        pages.extend(workload_pages(60, 2, 44));
        let pc = counts_of(&pages);
        let a = cluster(&pc, 3, 1, &TrainOptions::default(), "t").unwrap();
        let b = cluster(&pc, 3, 1, &TrainOptions::default(), "t").unwrap();
        let ids = |c: &Clustering| c.tables.iter().map(|t| t.id()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
        assert!(matches!(
            cluster(&pc, 0, 1, &TrainOptions::default(), "t"),
            Err(TrainError::BadTableCount { .. })
        ));
        assert!(matches!(
            cluster(&pc[..40], 2, 1, &TrainOptions::default(), "t"),
            Err(TrainError::TooFewPages { .. })
        ));
    }
}
