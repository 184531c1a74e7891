//! The fewest-bits header search ([`HeaderForm::Fewest`]), for consumers
//! that send the header with every stream and carry its exact bit count
//! (ISA-L's `deflate_hdr_extra_bits`): no byte alignment is needed there,
//! so every bit counts once per stream.
//!
//! From the greedy coding, alternate the best run split for the current
//! code-length code (the aligned search's exact [`Dp`], any residue) and
//! the Huffman code of that split's items with the smallest HCLEN; the
//! byte-aligned search's result competes too (it is sometimes shorter still).
//! Each step can only shorten the best; not proven optimal.

use super::align::{aligned, ROUNDS};
use super::dp::Dp;
use super::*;

/// The fewest-bits encoding found for `seq` (HLIT lengths then HDIST).
pub(super) fn fewest(seq: &[u8], hlit: usize, greedy: &Encoding) -> Encoding {
    let mut best = greedy.clone();
    let mut keep = |e: Encoding| {
        if e.bits() < best.bits() {
            best = e;
        }
    };
    let mut cl = greedy.cl_lengths;
    let mut tried: Vec<[u8; NUM_CODE_LEN_SYMBOLS]> = Vec::new();
    for _ in 0..ROUNDS {
        if tried.contains(&cl) {
            break;
        }
        tried.push(cl);
        let dp = Dp::run(seq, hlit, &cl);
        let Some(r) = (0..8)
            .filter_map(|r| dp.best(r).map(|c| (c, r)))
            .min()
            .map(|(_, r)| r)
        else {
            break;
        };
        let items = dp.items(r);
        keep(Encoding {
            hclen: min_hclen(&cl),
            cl_lengths: cl,
            items: items.clone(),
        });
        let next = cl_tree(&items);
        keep(Encoding {
            hclen: min_hclen(&next),
            cl_lengths: next,
            items,
        });
        cl = next;
    }
    if let Some(a) = aligned(seq, hlit, greedy) {
        keep(a);
    }
    best
}
