//! The kernel-header import and its C scanner (`table_from_kernel_header`):
//! arbitrary text never panics, and a refusal is an error that says what was
//! wrong (a non-empty message). Write then read: the header we write for
//! the table the first byte selects (`common::once_per_table`), in the API
//! form the last byte selects, imports back to the same lengths (checked
//! once per table and form).
#![no_main]

use cannery_export::c_header::{kernel_header, Api, KernelOptions};
use cannery_export::import::table_from_kernel_header;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match table_from_kernel_header(&text) {
        // Whatever it read is a valid table; exporting it must then work
        // unless it breaks a rule of the API.
        Ok(t) => assert!(t.lengths().litlen[256] > 0),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    // Write then read, once per table (the first byte selects it,
    // `common::once_per_table`) and API form (the last byte selects it):
    // each form of a table is its own check, so the fuzzer reaches every
    // pair, and an input writes and reads one header, not three.
    let api = Api::ALL[data.last().map_or(0, |&b| b as usize % Api::ALL.len())];
    common::once_per_table(data, true, api as u8, |table| {
        if let Ok(h) = kernel_header(table, &KernelOptions::new("canned").with_api(api)) {
            let back = table_from_kernel_header(&h)
                .unwrap_or_else(|e| panic!("own {api} header imports: {e}\n{h}"));
            assert_eq!(back.lengths(), table.lengths());
        }
    });
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    common::mutate(data, size, max_size, seed)
});
