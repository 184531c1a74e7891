//! cannery-trainer: turns pages into deflate symbol statistics and trains
//! canned tables; evaluates them against the compressors in [`peers`].

pub mod bench;
pub mod peers;
