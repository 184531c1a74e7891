//! The run-split DP as first written, every item pushed from its position
//! (code 18's 128 runs included), kept as the reference [`Dp::run`] must
//! match state for state: the same costs and the same back pointers.

use super::super::align::symbol_counts;
use super::*;
use proptest::prelude::*;

/// An unreached state.
const INF: u32 = u32::MAX;

/// Each state's fewest bits ([`INF`]: unreached), and the last item on
/// that path with the residue before it.
type States = (Vec<u32>, Vec<(ClItem, u8)>);

fn reference(seq: &[u8], hlit: usize, cl: &[u8; NUM_CODE_LEN_SYMBOLS]) -> States {
    let n = seq.len();
    let (same, prev_run) = runs(seq, hlit);
    let none = ClItem {
        symbol: 0,
        extra: 0,
    };
    let mut cost = vec![INF; (n + 1) * 8 + 139 * 8];
    let mut back = vec![(none, 0u8); cost.len()];
    cost[0] = 0;
    for i in 0..n {
        let mut items = Vec::new();
        let v = seq[i];
        if cl[v as usize] != 0 {
            let item = ClItem {
                symbol: v,
                extra: 0,
            };
            items.push((item, u32::from(cl[v as usize]), 1));
        }
        let zeros = if v == 0 { same[i] } else { 0 };
        for (symbol, min, max) in [
            (16u8, 3, prev_run[i].min(6)),
            (17, 3, zeros.min(10)),
            (18, 11, zeros.min(138)),
        ] {
            if cl[symbol as usize] == 0 {
                continue;
            }
            let bits = u32::from(cl[symbol as usize]) + extra_bits(symbol as usize);
            for run in min..=max {
                let extra = (run - min) as u8;
                items.push((ClItem { symbol, extra }, bits, run as u8));
            }
        }
        for r in 0..8 {
            let c = cost[i * 8 + r];
            if c == INF {
                continue;
            }
            for &(item, bits, run) in &items {
                let k = (i + run as usize) * 8 + (r + bits as usize) % 8;
                if c + bits < cost[k] {
                    cost[k] = c + bits;
                    back[k] = (item, r as u8);
                }
            }
        }
    }
    cost.truncate((n + 1) * 8);
    back.truncate((n + 1) * 8);
    (cost, back)
}

fn assert_same(seq: &[u8], hlit: usize, cl: &[u8; NUM_CODE_LEN_SYMBOLS]) {
    let dp = Dp::run(seq, hlit, cl);
    let (cost, back) = reference(seq, hlit, cl);
    let costs: Vec<u32> = (0..cost.len())
        .map(|k| match dp.keys[k / 8][k % 8] >> KEY_SHIFT {
            c if c < UNREACHED => c as u32,
            _ => INF,
        })
        .collect();
    assert_eq!(costs, cost, "costs of {seq:?} (hlit {hlit}) under {cl:?}");
    for k in (1..cost.len()).filter(|&k| cost[k] != INF) {
        let (item, r) = dp.back(k / 8, k % 8);
        assert_eq!(
            (item, r as u8),
            back[k],
            "state {k} of {seq:?} under {cl:?}"
        );
    }
}

/// Lengths with zero runs of every size around 11 and 138 and segment ends.
fn runs_of_zeros() -> impl Strategy<Value = (Vec<u8>, usize)> {
    prop::collection::vec((0u8..16, 1usize..160, any::<bool>()), 1..12).prop_flat_map(|parts| {
        let mut seq = Vec::new();
        for (v, len, zero) in parts {
            let v = if zero { 0 } else { v };
            seq.extend(std::iter::repeat_n(v, len.min(316 - seq.len().min(316))));
        }
        seq.truncate(316);
        if seq.is_empty() {
            seq.push(0);
        }
        let n = seq.len();
        (Just(seq), 0..=n)
    })
}

/// A complete code-length code (lengths ≤ 7) in which code 18, 17 or 16 may
/// be missing: every residue of its lengths mod 8 shows up.
fn code_length_code() -> impl Strategy<Value = [u8; NUM_CODE_LEN_SYMBOLS]> {
    prop::collection::vec(0u64..40, NUM_CODE_LEN_SYMBOLS).prop_map(|counts| {
        let counts: [u64; NUM_CODE_LEN_SYMBOLS] = counts.try_into().expect("19");
        cl_tree_of(counts)
    })
}

proptest! {
    #[test]
    fn pulled_zero_runs_reach_the_states_and_paths_of_pushed_ones(
        (seq, hlit) in runs_of_zeros(),
        cl in code_length_code(),
    ) {
        assert_same(&seq, hlit, &cl);
    }
}

#[test]
fn pulled_zero_runs_match_on_shipped_tables() {
    let trained = include_str!("../../../../../export/tests/golden/trained.table.json");
    let tables = [
        crate::Table::kernel_2024(),
        crate::Table::fixed(),
        crate::Table::from_json(trained).expect("golden trained table"),
    ];
    for t in tables {
        let l = t.lengths();
        let (hlit, hdist) = counts(l);
        let mut seq = l.litlen[..hlit].to_vec();
        seq.extend_from_slice(&l.dist[..hdist]);
        let g = greedy(&seq, hlit);
        assert_same(&seq, hlit, &g.cl_lengths);
        // A code in which code 18 is short, so it is chosen wherever it fits.
        let mut counts = symbol_counts(&g.items);
        counts[18] += 1000;
        assert_same(&seq, hlit, &cl_tree_of(counts));
    }
}
