//! Histogram files: arbitrary bytes read as a histogram never panic; a
//! histogram that loads survives its own JSON unchanged, and merging it
//! with itself doubles every count or reports an overflow (never wraps).
#![no_main]

use cannery_trainer::Histogram;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(h) = Histogram::from_json(text) {
        let back = Histogram::from_json(&h.to_json()).expect("own JSON loads");
        assert_eq!(back, h);
        if let Ok(twice) = h.clone().merged(&h) {
            assert_eq!(twice.pages, 2 * h.pages);
        }
    }
});
