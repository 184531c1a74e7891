//! Human units for what reports print, defined once. A table column
//! carries one unit, named in its header ("p50 µs", "pool KiB"), and its
//! cells are bare numbers in that unit with fixed decimals, so values in
//! one column compare at a glance: [`micros`], [`kib`], [`mib`]. A lone
//! size in a sentence picks its own unit ([`size`]).
//!
//! Sizes go through `bytesize`. Durations are fixed-unit on purpose: a
//! human-duration formatter (such as `humantime`'s) switches units from
//! value to value ("7us 90ns", "20us"), which is what a column must not do.
//! JSON keeps raw bytes and nanoseconds; nothing here is serialized.

use bytesize::ByteSize;

/// Nanoseconds as microseconds with two decimals (`7090` → `7.09`): the
/// unit of every per-page time column ("… µs").
pub fn micros(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e3)
}

/// Bytes as whole KiB (`41984` → `41`): the unit of pool columns
/// ("… KiB"). Negative for a pool that shrank.
pub fn kib(bytes: i64) -> String {
    let sign = if bytes < 0 { "-" } else { "" };
    format!("{sign}{:.0}", ByteSize::b(bytes.unsigned_abs()).as_kib())
}

/// Bytes as MiB with two decimals (`1572864` → `1.50`): the unit of file
/// size columns ("… MiB").
pub fn mib(bytes: u64) -> String {
    format!("{:.2}", ByteSize::b(bytes).as_mib())
}

/// One size on its own, in the binary unit that suits it (`1.5 MiB`).
pub fn size(bytes: u64) -> String {
    ByteSize::b(bytes).display().iec().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_keeps_its_unit_whatever_the_magnitude() {
        let us: Vec<String> = [90, 7_090, 20_000, 123_456_789]
            .into_iter()
            .map(micros)
            .collect();
        assert_eq!(us, ["0.09", "7.09", "20.00", "123456.79"]);
        assert_eq!(kib(41_984), "41");
        assert_eq!(kib(6_230_016), "6084");
        assert_eq!(kib(-2048), "-2");
        assert_eq!(mib(1_572_864), "1.50");
        assert_eq!(mib(0), "0.00");
    }

    #[test]
    fn a_lone_size_names_its_unit() {
        assert_eq!(size(1_572_864), "1.5 MiB");
        assert_eq!(size(512), "512 B");
    }
}
