//! Table deserialization: arbitrary bytes (JSON or binary form) never
//! panic; a table that loads survives both forms unchanged. Histogram
//! files have their own target (`histogram_deserialize`).
#![no_main]

use cannery_codec::Table;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = Table::from_bytes(data) {
        let j = Table::from_json(&t.to_json()).expect("own JSON loads");
        assert_eq!(j, t);
        assert_eq!(j.id(), t.id());
        let b = Table::from_binary(&t.to_binary()).expect("own binary loads");
        assert_eq!(b, t);
    }
});
