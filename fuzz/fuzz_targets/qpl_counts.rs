//! The QPL counts file read back (`qpl::parse_counts`, `table_from_counts`):
//! arbitrary bytes never panic and a refusal names the length, or the
//! symbol and byte offset, or the table rule that is wrong. Write then read:
//! the counts of a table QPL can load (the table the first byte selects,
//! checked once per table) read back to the same table, and package-merge
//! over the counts gives back its lengths (QPL's own route).
#![no_main]

use cannery_codec::huffman::limited_code_lengths;
use cannery_export::qpl::{parse_counts, table_from_counts, CountsError, QplExport, COUNTS_LEN};
use libfuzzer_sys::{fuzz_mutator, fuzz_target};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    match table_from_counts(data) {
        Ok(t) => {
            // Read back, written again: the same bytes.
            let (ll, d) = parse_counts(data).expect("read once already");
            let again: Vec<u8> = ll
                .iter()
                .chain(&d)
                .flat_map(|&c| (c as u32).to_le_bytes())
                .collect();
            assert_eq!(again, data);
            assert_eq!(t.lengths().litlen.iter().filter(|&&l| l == 0).count(), 0);
        }
        Err(CountsError::Length { found }) => assert!(found == data.len() && found != COUNTS_LEN),
        Err(CountsError::NotALength { offset, count, .. }) => {
            assert_eq!(data[offset..offset + 4], count.to_le_bytes());
            assert!(!count.is_power_of_two() || count > 1 << 14);
        }
        Err(e @ CountsError::Table(_)) => {
            assert!(e.to_string().starts_with("the counts give no valid table"))
        }
        Err(e) => panic!("unexpected error {e}"),
    }
    // Write then read, once per table (the first byte selects it,
    // `common::once_per_table`).
    common::once_per_table(data, false, 0, |table| {
        if let Ok(q) = QplExport::new(table) {
            let bytes = q.counts_bytes();
            let back = table_from_counts(&bytes).expect("own counts read");
            assert_eq!(back.lengths(), table.lengths());
            let (ll, d) = parse_counts(&bytes).expect("own counts parse");
            assert_eq!(limited_code_lengths(&ll, 15), table.lengths().litlen);
            assert_eq!(limited_code_lengths(&d, 15), table.lengths().dist);
        }
    });
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    common::mutate(data, size, max_size, seed)
});
